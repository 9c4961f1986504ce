// Package gate decides whether a change may pass CI, from evidence only,
// and fails closed: no evidence is never a pass.
//
// Evaluate takes the base and current benchset.Sets and a Policy (and
// EvaluateCurrent the current Set alone, for the absolute rules) and runs,
// in order: the input rules (a missing or empty side, unreadable lines,
// invalid or incomplete runs), the stats comparison (benchmath: medians,
// Mann-Whitney U at Policy.Alpha), the coverage rules (a benchmark or an
// expected symbol missing on either side), the sample rule (too few
// samples for the Mann-Whitney test to ever reach Alpha, computed from its
// minimum attainable p), the direction rule (a significant change in a
// unit of unknown direction), the geomean rule (significant geomean
// regression beyond the threshold), absolute limits on mean and p99, and
// trend limits against the baseline with absolute floors per unit
// (skipped, or inconclusive, without a baseline). Every rule leaves
// Findings that name the rule and the numbers; a rule that evaluated
// nothing leaves a NOTE, never a pass. The Outcome is Regression if any
// finding is, else Inconclusive if any finding is, else Pass — except that
// evidence from an invalid or incomplete run, or from contradicting unit
// declarations, is never a regression, and an outcome no rule decided is
// inconclusive.
package gate
