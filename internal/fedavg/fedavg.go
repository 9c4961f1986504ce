package fedavg

// FedAvg writes into dst the weighted mean of updates, weight i being the
// sample count of client i (weights nil: equal weights), then clips it if
// the Aggregator has a ClipNorm. All updates and dst must have the same
// length. The result is the same for every worker count.
//
// Error bound: each coordinate is within 10·2⁻²⁴·Σᵢ wᵢ|uᵢ| (wᵢ normalised)
// of the exact mean, plus the final rounding to float32 (2⁻²⁴|mean|) and,
// where products or sums underflow into float32 subnormals, n·2⁻¹⁴⁶;
// products and sums of eight clients are formed in float32 and the
// eight-client groups are accumulated in float64, so the bound does not
// grow with the client count (checked against exact sums, exact_test.go).
//
// On error dst is left in an unspecified state.
func (a *Aggregator) FedAvg(dst []float32, updates [][]float32, weights []float64) error {
	e := a.engine
	e.mu.Lock()
	defer e.mu.Unlock()
	dim, err := checkShape(dst, updates)
	if err != nil {
		return err
	}
	if err := e.normaliseWeights(len(updates), weights); err != nil {
		return err
	}
	workers, tiles := e.prepare(dst, updates, dim)
	e.exec(workers, tiles, fedavgTile)
	err = e.finish(dst, updates)
	e.release()
	return err
}

// fedavgTile computes one tile of the weighted mean in worker w's float64
// partial buffer (at most 32 KiB: in L1 where L1 is larger, else in L2, while the clients stream
// past) and rounds it into dst.
func fedavgTile(e *engine, w, tile int) {
	lo, hi := e.span(tile)
	acc := e.acc[w][:hi-lo]
	clear(acc)
	accumulate(acc, e.updates, e.wn, lo, hi)
	e.bad[tile] = -1
	if bad := round(e.dst[lo:hi], acc); bad >= 0 {
		e.bad[tile] = lo + bad
	}
}

// roundGo is round's portable loop.
func roundGo(dst []float32, src []float64) int {
	dst = dst[:len(src)]
	bad := -1
	for j, v := range src {
		f := float32(v)
		if f-f != 0 && bad < 0 {
			bad = j
		}
		dst[j] = f
	}
	return bad
}

// accumulate adds Σᵢ wn[i]·updates[i][lo:hi] into acc, eight clients at a
// time, so acc is loaded and stored once per eight input values.
func accumulate(acc []float64, updates [][]float32, wn []float32, lo, hi int) {
	c := 0
	for ; c+8 <= len(updates); c += 8 {
		u := updates[c : c+8 : c+8]
		add8(acc, u[0][lo:hi], u[1][lo:hi], u[2][lo:hi], u[3][lo:hi],
			u[4][lo:hi], u[5][lo:hi], u[6][lo:hi], u[7][lo:hi], (*[8]float32)(wn[c:c+8]))
	}
	for ; c+2 <= len(updates); c += 2 {
		add2(acc, updates[c][lo:hi], updates[c+1][lo:hi], wn[c], wn[c+1])
	}
	if c < len(updates) {
		add1(acc, updates[c][lo:hi], wn[c])
	}
}

func add8Go(acc []float64, u0, u1, u2, u3, u4, u5, u6, u7 []float32, w *[8]float32) {
	n := len(acc)
	u0, u1, u2, u3 = u0[:n], u1[:n], u2[:n], u3[:n]
	u4, u5, u6, u7 = u4[:n], u5[:n], u6[:n], u7[:n]
	w0, w1, w2, w3, w4, w5, w6, w7 := w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]
	for j := range acc {
		s := ((w0*u0[j] + w1*u1[j]) + (w2*u2[j] + w3*u3[j])) +
			((w4*u4[j] + w5*u5[j]) + (w6*u6[j] + w7*u7[j]))
		acc[j] += float64(s)
	}
}

func add2(acc []float64, u0, u1 []float32, w0, w1 float32) {
	n := len(acc)
	u0, u1 = u0[:n], u1[:n]
	for j := range acc {
		acc[j] += float64(w0*u0[j] + w1*u1[j])
	}
}

func add1(acc []float64, u0 []float32, w0 float32) {
	u0 = u0[:len(acc)]
	for j := range acc {
		acc[j] += float64(w0 * u0[j])
	}
}
