package fedavg

// blockFunc is the per-worker body of one operation. Operations are
// top-level functions, so storing one in engine.op does not allocate.
type blockFunc func(e *engine, w int)

// run calls op(e, w) for every w in [0, n) and returns when all have
// finished. The caller runs worker 0; long-lived goroutines run the others,
// so a steady-state call does not allocate. Goroutines are started on first
// need and exit when e.work is closed (Aggregator.Close or its cleanup).
func (e *engine) run(n int, op blockFunc) {
	e.op = op
	for e.started < n-1 {
		e.started++
		go e.loop()
	}
	for i := 1; i < n; i++ {
		e.wg.Add(1)
		e.work <- i
	}
	op(e, 0)
	e.wg.Wait()
	e.op = nil
}

// loop is one pool goroutine. The channel receive orders it after the
// writes run made to e before sending; wg.Done orders its writes before
// run returns.
func (e *engine) loop() {
	for w := range e.work {
		e.op(e, w)
		e.wg.Done()
	}
}

// ensureScratch sizes the per-worker buffers for n workers.
func (e *engine) ensureScratch(n, clients int) {
	for len(e.acc) < n {
		e.acc = append(e.acc, make([]float64, tileLen))
		e.col = append(e.col, nil)
	}
	for i := 0; i < n; i++ {
		if cap(e.col[i]) < clients {
			e.col[i] = make([]float32, clients)
		}
		e.col[i] = e.col[i][:clients]
	}
	if cap(e.sumsq) < n {
		e.sumsq = make([]float64, n)
		e.bad = make([]int, n)
	}
	e.sumsq, e.bad = e.sumsq[:n], e.bad[:n]
}
