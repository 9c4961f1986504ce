package micro

import (
	"bytes"
	"fmt"
	"io"
	"math"
)

// Goals of the FedAvg surface (issue 29), printed by `micro report
// --goals` and bench/micro/run.sh so that a run on a quiet machine says
// plainly whether they hold.
const (
	// GoalAutoOverBest bounds auto ÷ the best fixed worker count, on every
	// shape of the matrix.
	GoalAutoOverBest = 1.05
	// GoalBestOverFloor bounds the best fixed worker count ÷ the memory
	// floor (same bytes, same workers), by wall and by CPU time, at the
	// floorGoalShapes.
	GoalBestOverFloor = 1.20
)

// floorGoalShapes are the shapes GoalBestOverFloor is judged on.
var floorGoalShapes = [][2]int{{512, 8192}, {256, 8192}}

// WriteGoals reads Go benchmark output and prints the probes its runs
// used, then one line per goal and shape with the measured ratio (medians
// of the repetitions), the goal and PASS, FAIL or "not measured" (a case
// missing from the input). It returns how many lines failed.
func WriteGoals(w io.Writer, in io.Reader, file string) (failed int, err error) {
	b, err := io.ReadAll(in)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", file, err)
	}
	rs, err := readResults(bytes.NewReader(b), file)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", file, err)
	}
	agg, fl := rs["Aggregate"], rs["MemoryFloor"]
	if len(agg) == 0 {
		return 0, ErrNoResults
	}
	ew := &errWriter{w: w}
	writeProbeNotes(ew, b)
	for _, c := range aggClients {
		for _, d := range aggDims {
			failed += autoGoal(ew, agg, c, d)
		}
	}
	for _, s := range floorGoalShapes {
		failed += floorGoal(ew, agg, fl, s[0], s[1])
	}
	return failed, ew.err
}

// bestFixed is the fixed worker count with the lowest median time.
func bestFixed(agg map[string]*stats, shape string) (int, *stats) {
	bestW, best := 0, (*stats)(nil)
	for _, wk := range aggWorkers[:len(aggWorkers)-1] {
		st := agg[fmt.Sprintf("%s/workers=%d", shape, wk)]
		if st != nil && len(st.ns) > 0 && (best == nil || median(st.ns) < median(best.ns)) {
			bestW, best = wk, st
		}
	}
	return bestW, best
}

func autoGoal(w io.Writer, agg map[string]*stats, c, d int) int {
	shape := fmt.Sprintf("clients=%d/dim=%d", c, d)
	bestW, best := bestFixed(agg, shape)
	auto := agg[shape+"/workers=auto"]
	if best == nil || auto == nil || len(auto.ns) == 0 {
		fmt.Fprintf(w, "auto/best %s: not measured (goal <= %.2f)\n", shape, GoalAutoOverBest)
		return 1
	}
	r := median(auto.ns) / median(best.ns)
	choice := ""
	if len(auto.workers) > 0 {
		aw := int(median(auto.workers))
		choice = fmt.Sprintf("; auto chose %d, best fixed %d", aw, bestW)
		if st := agg[fmt.Sprintf("%s/workers=%d", shape, aw)]; st != nil && len(st.ns) > 0 {
			choice += fmt.Sprintf(", fixed %d ÷ best %.3f", aw, median(st.ns)/median(best.ns))
		}
	}
	fmt.Fprintf(w, "auto/best %s: %.3f (goal <= %.2f) %s%s\n", shape, r, GoalAutoOverBest, verdict(r <= GoalAutoOverBest), choice)
	return fails(r <= GoalAutoOverBest)
}

func floorGoal(w io.Writer, agg, fl map[string]*stats, c, d int) int {
	shape := fmt.Sprintf("clients=%d/dim=%d", c, d)
	bestW, best := bestFixed(agg, shape)
	var floor *stats
	if best != nil {
		floor = fl[fmt.Sprintf("bytes=%d/workers=%d", c*d*4, bestW)]
	}
	if best == nil || floor == nil || len(floor.ns) == 0 {
		fmt.Fprintf(w, "best/floor %s: not measured (goal <= %.2f)\n", shape, GoalBestOverFloor)
		return 1
	}
	wall := median(best.ns) / median(floor.ns)
	cpu := median(best.cpu) / median(floor.cpu)
	ok := wall <= GoalBestOverFloor && (math.IsNaN(cpu) || cpu <= GoalBestOverFloor)
	fmt.Fprintf(w, "best/floor %s: %.3f wall, %.3f cpu, %d workers (goal <= %.2f) %s\n", shape, wall, cpu, bestW, GoalBestOverFloor, verdict(ok))
	return fails(ok)
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func fails(ok bool) int {
	if ok {
		return 0
	}
	return 1
}
