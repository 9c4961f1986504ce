// Package quantile is the one definition of a sample quantile in
// sagebench and its distribution-free confidence interval.
//
// Definition: the q-quantile of n values is their nearest-rank
// quantile, the ⌈q·n⌉-th smallest (rank 1 for q·n ≤ 1), which is
// Hyndman & Fan's type 1, the inverse of the empirical distribution
// function. It is always one of the observed values (no interpolation
// between a fast answer and a failure) and a failed request, counted as
// +∞, sorts above every answer.
//
// Interval: the ranks l < u of an order-statistic interval
// [X(l), X(u)] such that the number B of sample values at or below the
// true quantile ξ_q, which is Binomial(n, q) for any continuous
// distribution, lies in [l, u−1] with probability ≥ the confidence;
// each tail holds at most half of 1 − confidence. The interval is exact
// (no normal approximation) and makes no assumption about the
// distribution beyond independent, identically distributed samples;
// its achieved coverage P(l ≤ B ≤ u−1) is reported beside it. When no
// rank below (above) the sample's is far enough, that side is open.
//
// Sample size: a quantile whose rank lies beyond the sample — fewer
// than 1/(1−q) values, e.g. a p99 of fewer than 100 — is not measured:
// its nearest-rank value is the maximum, and all the sample says is a
// one-sided lower bound (Estimate.Beyond, reported as the state bound
// with "max of n").
package quantile
