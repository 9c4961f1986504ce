// Package fedavg models the server side of one federated-learning round:
// combining n client updates of equal dimension into one global update.
//
// The pipeline of FedAvg is: validate the weights (sample counts) and
// normalise them to sum to one; split the coordinates into one contiguous
// block per worker; each worker accumulates its block over all clients,
// eight clients at a time in float32 and across groups in a pooled float64
// tile, and writes the rounded mean straight into the caller's dst (no
// merge pass, so the result is bit-identical for every worker count);
// non-finite inputs are detected from the accumulator, not by a separate
// scan; an optional L2 clip rescales dst when its norm exceeds the bound.
//
// The robust aggregators (coordinate-wise Median, TrimmedMean and
// MultiKrum) share the worker pool and the same input validation.
// ResolveWorkers turns a requested worker count (0 = auto) into the count
// used; it is a pure function of its arguments and GOMAXPROCS.
package fedavg
