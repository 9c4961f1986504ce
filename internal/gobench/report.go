package gobench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/record"
)

// writeReport writes the Markdown report: the conditions of the
// measurement, the verdict with its findings, the comparison, the raw
// outputs.
func (r *runner) writeReport(res *Result) error {
	var b bytes.Buffer
	c := r.cfg
	fmt.Fprintf(&b, "# sagebench gobench report\n\n")
	fmt.Fprintf(&b, "| | |\n| --- | --- |\n")
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, strings.ReplaceAll(v, "|", `\|`)) }
	row("base ref", fmt.Sprintf("`%s` (%s)", c.BaseRef, short(res.BaseCommit)))
	cur := "working tree at " + short(res.HeadCommit)
	if res.Dirty {
		cur += " with uncommitted changes"
	}
	row("current", cur)
	row("packages", "`"+c.Pkg+"`")
	row("bench", "`"+c.Bench+"`")
	row("benchtime", c.Benchtime)
	row("count", fmt.Sprintf("%d (interleaved base, current)", c.Count))
	if c.CPU != "" {
		row("cpu", c.CPU)
	}
	row("alpha", fmt.Sprint(c.Policy.Alpha))
	row("geomean threshold", fmt.Sprintf("%+.2f%% (%s)", c.Policy.Geomean.ThresholdPct, strings.Join(c.Policy.Geomean.Units, ", ")))
	row("time (UTC)", c.Now().UTC().Format(time.RFC3339))
	row("go", goVersion(c.Go))
	row("OS/arch", runtime.GOOS+"/"+runtime.GOARCH)
	row("CPU", cpuModel(r.cur.raw.Bytes()))
	row("raw outputs", fmt.Sprintf("[base](%s), [current](%s)", filepath.Base(res.BasePath), filepath.Base(res.CurrentPath)))
	fmt.Fprintf(&b, "\n## Verdict\n\n")
	if err := res.Outcome.WriteMarkdown(&b); err != nil {
		return err
	}
	return record.WriteFileAtomic(res.ReportPath, b.Bytes())
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	if sha == "" {
		return "unknown"
	}
	return sha
}

func goVersion(goCmd string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := command(ctx, ".", goCmd, "env", "GOVERSION")
	if err != nil {
		return runtime.Version() + " (of sagebench; go env failed)"
	}
	return strings.TrimSpace(out)
}

// cpuModel is the "cpu:" line the testing package prints.
func cpuModel(raw []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "cpu: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
