// Package sched models the gateway's scheduling decisions: which queued
// request goes next when an engine frees a slot. A Policy holds queued Items
// and answers Pop(now) with the one to dispatch; policies never read a clock,
// the caller passes now, so tests drive them with a fake one. Quotas decide
// admission per tenant (concurrency and rate) before a request is queued.
//
// Pipeline: request → Quotas.Admit (429 + Retry-After) → Policy.Push →
// (slot free) Policy.Pop / Batcher.PopBatch → router → engine.
package sched
