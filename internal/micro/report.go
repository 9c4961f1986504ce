package micro

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// ErrNoResults is returned by Report when the input holds no result it
// can tabulate.
var ErrNoResults = errors.New("no Codec or Aggregate results in the input")

// stats collects repeated measurements of one benchmark.
type stats struct{ ns, cpu, allocs, workers []float64 }

func (s *stats) add(r *benchfmt.Result) {
	if v, ok := r.Value("sec/op"); ok {
		s.ns = append(s.ns, v*1e9)
	}
	if v, ok := r.Value("cpu-sec/op"); ok { // benchfmt tidies cpu-ns/op
		s.cpu = append(s.cpu, v*1e9)
	}
	if v, ok := r.Value("allocs/op"); ok {
		s.allocs = append(s.allocs, v)
	}
	if v, ok := r.Value("workers"); ok {
		s.workers = append(s.workers, v)
	}
}

func meanSD(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) > 1 {
		for _, x := range xs {
			sd += (x - mean) * (x - mean)
		}
		sd = math.Sqrt(sd / float64(len(xs)-1))
	}
	return mean, sd
}

// median of xs (NaN when empty). Ratios in the tables use medians: on a
// shared machine noise only ever adds time, and a few slow repetitions
// move the mean far more than the median.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// results maps a benchmark base name to its key=value sub-name and stats.
type results map[string]map[string]*stats

// readResults parses Go benchmark format, keying results by base name
// (without the Benchmark prefix) and "/"-joined key=value parts without
// the -GOMAXPROCS suffix.
func readResults(in io.Reader, file string) (results, error) {
	rs := results{}
	br := benchfmt.NewReader(in, file)
	for br.Scan() {
		r, ok := br.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		b, k := resultKey(r)
		if rs[b] == nil {
			rs[b] = map[string]*stats{}
		}
		if rs[b][k] == nil {
			rs[b][k] = &stats{}
		}
		rs[b][k].add(r)
	}
	return rs, br.Err()
}

// resultKey is a result's benchmark base name (Mohawk's names mapped to
// ours) and its key=value sub-name.
func resultKey(r *benchfmt.Result) (base, key string) {
	b, parts := r.Name.Parts()
	var keys []string
	for _, p := range parts {
		if s := string(p); strings.HasPrefix(s, "/") {
			keys = append(keys, s[1:])
		}
	}
	base = strings.TrimPrefix(string(b), "Benchmark")
	if base == "AggregateParallel" {
		base, keys = fromMohawk(keys)
	}
	return base, strings.Join(keys, "/")
}

// mohawkShape reads the contract's sub-benchmark names clients512_dim8192
// and workersAuto / workers2.
var mohawkShape = regexp.MustCompile(`^clients([0-9]+)_dim([0-9]+)$`)

// fromMohawk turns the parts of a Mohawk-named aggregation result
// (AggregateParallel/clients512_dim8192/workersAuto) into sagebench's
// (Aggregate/clients=512/dim=8192/workers=auto), so that the report
// tabulates either. Parts it does not recognise are kept as they are.
func fromMohawk(parts []string) (string, []string) {
	if len(parts) != 2 {
		return "AggregateParallel", parts
	}
	m := mohawkShape.FindStringSubmatch(parts[0])
	w, ok := strings.CutPrefix(parts[1], "workers")
	if m == nil || !ok {
		return "AggregateParallel", parts
	}
	if w == "Auto" {
		w = "auto"
	}
	return "Aggregate", []string{"clients=" + m[1], "dim=" + m[2], "workers=" + w}
}

// Report reads Go benchmark output and writes two markdown tables: JSON
// against the zero-copy codec per op and dim (mean ± sd, speedup, allocs,
// alloc reduction), and FedAvg against the memory floor per shape (best
// fixed worker count, floor at the same bytes and workers, auto ÷ best).
func Report(w io.Writer, in io.Reader, file string) error {
	b, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	rs, err := readResults(bytes.NewReader(b), file)
	if err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	var codec, agg bytes.Buffer
	rows := codecTable(&codec, rs["Codec"]) + aggregateTable(&agg, rs["Aggregate"], rs["MemoryFloor"])
	if rows == 0 {
		return ErrNoResults
	}
	if codec.Len() > 0 {
		if _, err := codec.WriteTo(w); err != nil {
			return err
		}
	}
	if agg.Len() > 0 {
		writeProbeNotes(w, b)
	}
	_, err = agg.WriteTo(w)
	return err
}

// writeProbeNotes prints the distinct probe lines of the input (see
// writeProbeLines): which probe each run's workers=auto used.
func writeProbeNotes(w io.Writer, in []byte) {
	seen := map[string]bool{}
	for line := range strings.Lines(string(in)) {
		line = strings.TrimRight(line, "\r\n")
		for prefix, label := range map[string]string{probeLinePrefix: "probe: ", choiceLinePrefix: "auto per shape: "} {
			if rest, ok := strings.CutPrefix(line, prefix); ok && !seen[line] {
				seen[line] = true
				fmt.Fprintf(w, "%s%s\n\n", label, rest)
			}
		}
	}
}

// table writes a markdown header once, before the first row.
type table struct {
	w      io.Writer
	header string
	rows   int
}

func (t *table) row(format string, args ...any) {
	if t.rows == 0 {
		fmt.Fprint(t.w, t.header)
	}
	t.rows++
	fmt.Fprintf(t.w, format, args...)
}

func (t *table) end() int {
	if t.rows > 0 {
		fmt.Fprintln(t.w)
	}
	return t.rows
}

func codecTable(w io.Writer, codec map[string]*stats) int {
	t := table{w: w, header: "| op | dim | json ns/op (mean ± sd) | zerocopy ns/op (mean ± sd) | speedup (medians) | json allocs | zerocopy allocs | alloc reduction | n |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"}
	for _, op := range []string{"encode", "decode"} {
		for _, d := range codecDims {
			j := codec[fmt.Sprintf("format=json/op=%s/dim=%d", op, d)]
			z := codec[fmt.Sprintf("format=zerocopy/op=%s/dim=%d", op, d)]
			if j == nil || z == nil {
				continue
			}
			jm, jsd := meanSD(j.ns)
			zm, zsd := meanSD(z.ns)
			ja, _ := meanSD(j.allocs)
			za, _ := meanSD(z.allocs)
			red := "n/a"
			if ja > 0 {
				red = fmt.Sprintf("%.0f%%", 100*(ja-za)/ja)
			}
			t.row("| %s | %d | %s ± %s | %s ± %s | %.0f× | %.0f | %.0f | %s | %d |\n",
				op, d, num(jm), num(jsd), num(zm), num(zsd), median(j.ns)/median(z.ns), ja, za, red, min(len(j.ns), len(z.ns)))
		}
	}
	return t.end()
}

// num formats a mean or deviation with about three significant digits.
func num(x float64) string {
	switch {
	case math.IsNaN(x):
		return "–"
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// aggregateTable compares, per shape, the fixed worker count with the
// lowest median time against the memory floor at the same bytes and
// workers (wall time and process CPU time), and auto against it: its own
// runs, and the fixed runs of the count it chose (auto W; with the same
// count, auto runs the same code as that fixed case, so this ratio is free
// of the noise between two runs of one thing).
func aggregateTable(w io.Writer, agg, floor map[string]*stats) int {
	t := table{w: w, header: "| clients | dim | best W | FedAvg ns/op (mean ± sd) | floor ns/op (same W) | FedAvg ÷ floor | FedAvg ÷ floor (cpu) | auto ns/op | auto ÷ best | auto W | best at auto W ÷ best | n |\n" +
		"|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"}
	for _, c := range aggClients {
		for _, d := range aggDims {
			shape := fmt.Sprintf("clients=%d/dim=%d", c, d)
			bestW, best := bestFixed(agg, shape)
			if best == nil {
				continue
			}
			fl := floor[fmt.Sprintf("bytes=%d/workers=%d", c*d*4, bestW)]
			if fl == nil {
				fl = &stats{}
			}
			auto := agg[shape+"/workers=auto"]
			if auto == nil {
				auto = &stats{}
			}
			bm, bsd := meanSD(best.ns)
			fm, fsd := meanSD(fl.ns)
			am, asd := meanSD(auto.ns)
			aw, atw := "?", math.NaN()
			if len(auto.workers) > 0 {
				w := int(median(auto.workers))
				aw = fmt.Sprint(w)
				if st := agg[fmt.Sprintf("%s/workers=%d", shape, w)]; st != nil {
					atw = median(st.ns) / median(best.ns)
				}
			}
			t.row("| %d | %d | %d | %s ± %s | %s ± %s | %.2f | %.2f | %s ± %s | %.3f | %s | %.3f | %d |\n",
				c, d, bestW, num(bm), num(bsd), num(fm), num(fsd), median(best.ns)/median(fl.ns),
				median(best.cpu)/median(fl.cpu), num(am), num(asd), median(auto.ns)/median(best.ns), aw, atw, len(best.ns))
		}
	}
	return t.end()
}
