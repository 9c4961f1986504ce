// Package fedavg models the server side of one federated-learning round:
// combining n client updates of equal dimension into one global update.
//
// The pipeline of FedAvg is: validate the shapes and the weights (sample
// counts) and normalise the weights to sum to one; cut the coordinates into
// contiguous tiles; workers of a Pool (the caller plus long-lived
// goroutines) claim tiles one at a time; for its tile a worker accumulates
// eight clients at a time — products and sums in float32, with AVX-512 or
// AVX2+FMA on amd64 — into its pooled float64 partial buffer (L1-resident),
// and rounds the buffer straight into the caller's dst (no merge pass;
// every coordinate is computed the same way whichever worker takes it, so
// the result is bit-identical for every worker count). Non-finite inputs
// are detected from the accumulator, not by a separate scan. An optional L2
// clip rescales dst when its norm exceeds the bound.
//
// The robust aggregators (coordinate-wise Median, TrimmedMean and
// MultiKrum) share the pool and the input validation. A Machine turns a
// requested worker count (0 = auto) into the count used, from the bytes
// each worker needs and a worker ceiling, per probed dimension; the zero
// Machine (ResolveWorkers) is the constant fallback. Both are pure
// functions of their arguments and GOMAXPROCS. Probe measures a Machine on
// the machine it runs on: per dimension a Grid of paired rounds (every
// worker count twice, back to back, ABBA) per input size, of which the
// median paired ratio decides whether more workers beat fewer (by a
// margin), while the fastest trials check the grid and tell a probe taken
// under load; Revalidate checks cached grids cheaply against the machine
// as it is now, re-probes a cache taken under load and pools paired
// rounds measured as quietly, so that the model never moves on minima.
package fedavg
