// Package q2 is Q2 ControlMix (entry control_plane): critical, normal and
// background LLM and embedding requests of several tenants through one
// gateway sized to queue (about 1.3× its LLM capacity), under each
// scheduling policy in interleaved rounds — fifo, priority, slo_aware,
// fair_share — each round with the same arrivals for every policy.
//
// Pipeline: Plan draws the schedule and request mix from the seed; Run
// switches the policy through the admin API and sends each round's
// sub-run; outcome splits the records by policy and answers per policy
// on the critical class: its p99 TTFT and SLO attainment, the best
// policy against fifo with a p-value over rounds, and the gateway
// queue's occupancy from the target's queue-wait header.
package q2
