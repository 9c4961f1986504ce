package stats

import (
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/benchset"
)

var update = flag.Bool("update", false, "regenerate the benchstat goldens by running testdata/regen.sh (needs the Go module proxy)")

// goldenCase is one line of testdata/cases.txt.
type goldenCase struct {
	name  string
	opts  Options
	files []string
}

func readCases(t *testing.T) []goldenCase {
	t.Helper()
	b, err := os.ReadFile("testdata/cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	for _, line := range strings.Split(string(b), "\n") {
		name, args, ok := strings.Cut(line, "|")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		c := goldenCase{name: strings.TrimSpace(name)}
		f := strings.Fields(args)
		for i := 0; i < len(f); i++ {
			if !strings.HasPrefix(f[i], "-") {
				c.files = append(c.files, f[i])
				continue
			}
			v := f[i+1]
			i++
			switch f[i-1] {
			case "-alpha":
				c.opts.Alpha, err = strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatal(err)
				}
			case "-col":
				c.opts.Col = v
			case "-row":
				c.opts.Row = v
			case "-ignore":
				c.opts.Ignore = v
			case "-filter":
				c.opts.Filter = v
			default:
				t.Fatalf("cases.txt: unknown flag %s", f[i-1])
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// goldenTable is one table of benchstat's CSV output.
type goldenTable struct {
	cols    []string
	unit    string
	rows    [][]string // name, then per column center, CI[, delta, P]
	geomean []string
}

func parseGoldenCSV(t *testing.T, path string) []*goldenTable {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var tables []*goldenTable
	var cur *goldenTable
	for i, rec := range recs {
		switch {
		case len(rec) > 2 && rec[0] == "" && rec[2] == "CI":
			cur = &goldenTable{unit: rec[1]}
			for j := 1; j < len(recs[i-1]); j++ {
				if recs[i-1][j] != "" {
					cur.cols = append(cur.cols, recs[i-1][j])
				}
			}
			tables = append(tables, cur)
		case cur != nil && len(rec) > 1 && rec[0] == "geomean":
			cur.geomean = rec
			cur = nil
		case cur != nil && len(rec) > 1:
			cur.rows = append(cur.rows, rec)
		}
	}
	return tables
}

// goldenWarnings returns benchstat's CSV warnings ("B3: msg") as sorted
// messages.
func goldenWarnings(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if _, msg, ok := strings.Cut(line, ": "); ok {
			out = append(out, msg)
		}
	}
	sort.Strings(out)
	return out
}

func ourWarnings(rep *Report) []string {
	var out []string
	for _, tb := range rep.Tables {
		for _, r := range tb.Rows {
			for _, c := range r.Cells {
				if c != nil {
					out = append(out, c.Warnings...)
				}
			}
		}
		for _, g := range tb.Geomean {
			out = append(out, g.Warnings...)
		}
	}
	sort.Strings(out)
	return out
}

func TestMatchesBenchstat(t *testing.T) {
	if *update {
		cmd := exec.Command("sh", "testdata/regen.sh")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("regen.sh: %v\n%s", err, out)
		}
	}
	for _, gc := range readCases(t) {
		t.Run(gc.name, func(t *testing.T) {
			var sets []*benchset.Set
			for _, f := range gc.files {
				s, err := benchset.Read(filepath.Join("testdata", f), f)
				if err != nil {
					t.Fatal(err)
				}
				sets = append(sets, s)
			}
			results, units := benchset.Combine(sets...)
			rep, err := Compare(results, units, gc.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := parseGoldenCSV(t, filepath.Join("testdata/golden", gc.name+".csv"))
			checkTables(t, rep.Tables, want)
			gw := goldenWarnings(t, filepath.Join("testdata/golden", gc.name+".stderr"))
			if ow := ourWarnings(rep); fmt.Sprint(ow) != fmt.Sprint(gw) {
				t.Errorf("warnings:\n ours %q\n benchstat %q", ow, gw)
			}
		})
	}
}

func checkTables(t *testing.T, got []*Table, want []*goldenTable) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d tables, benchstat has %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Unit != w.unit || fmt.Sprint(g.Columns) != fmt.Sprint(w.cols) {
			t.Fatalf("table %d: unit %q cols %q, benchstat %q %q", i, g.Unit, g.Columns, w.unit, w.cols)
		}
		if len(g.Rows) != len(w.rows) {
			t.Fatalf("table %s: %d rows, benchstat %d", g.Unit, len(g.Rows), len(w.rows))
		}
		for j, wr := range w.rows {
			checkRow(t, g.Unit, g.Rows[j], wr)
		}
		checkGeomean(t, g, w.geomean)
	}
}

// checkRow compares one row: exact median, CI percent, delta and p text.
func checkRow(t *testing.T, unit string, r *Row, want []string) {
	t.Helper()
	if r.Name != want[0] {
		t.Errorf("%s: row %q, benchstat %q", unit, r.Name, want[0])
	}
	pos := 1
	for j, c := range r.Cells {
		start := 1
		if j > 0 {
			start = 3 + (j-1)*4
		}
		if c == nil {
			continue
		}
		pos = start
		got := []string{fmt.Sprint(c.Center), c.CIPct()}
		if c.HasBase {
			got = append(got, c.Delta, c.PText())
		}
		for k, g := range got {
			if pos+k >= len(want) || want[pos+k] != g {
				t.Errorf("%s %s col %d field %d: ours %q, benchstat row %q", unit, r.Name, j, k, g, want)
			}
		}
	}
}

func checkGeomean(t *testing.T, g *Table, want []string) {
	t.Helper()
	for j, gm := range g.Geomean {
		start := 1
		if j > 0 {
			start = 3 + (j-1)*4
		}
		if gm.HasSummary && (start >= len(want) || want[start] != fmt.Sprint(gm.Summary)) {
			t.Errorf("%s geomean col %d: ours %v, benchstat %q", g.Unit, j, gm.Summary, want)
		}
		if j > 0 && (start+2 >= len(want) || want[start+2] != gm.DeltaPct()) {
			t.Errorf("%s geomean ratio col %d: ours %q, benchstat %q", g.Unit, j, gm.DeltaPct(), want)
		}
	}
}
