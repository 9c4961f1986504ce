// Package answer draws each Q's answer: the figure that shows what the
// Q asks, built from the Q's typed result (its tables, metrics and drill
// events) and, for the drills, the windowed series of the run
// directory — never from the raw keys of a summary.
//
// Model: a Column is what one run (or one configuration pooled over its
// repetitions by Pool, which estimates every metric with aggregate.Of)
// contributes; Figure lays several columns side by side on shared axes,
// one column per run. Each Q has a recipe: Q1 the stage breakdown and
// retrieval recall, Q2 the critical-class p99 TTFT and SLO attainment
// per policy, Q3 the victim alone and contended per policy, Q4 the
// frontier per pool size with its brackets against ideal scaling, Q5,
// Q7 and Q8 a timeline of windowed p99 and throughput with fault spans,
// the recovery bound and each recovery, Q6 burst and base SLO
// attainment per priority and policy. What a recipe needs and a result
// lacks (a table renamed, a run that measured nothing) becomes a "not
// measurable" message in the figure, not a failure.
package answer
