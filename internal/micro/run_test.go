package micro

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

func TestCasesNamesAreUniqueKeyValuePaths(t *testing.T) {
	cs, err := Cases("all")
	if err != nil {
		t.Fatal(err)
	}
	want := 60 + 28 + 32
	if len(cs) != want {
		t.Errorf("%d cases, want %d (aggregate 60, floor 28, codec 32)", len(cs), want)
	}
	seen := map[string]bool{}
	kv := regexp.MustCompile(`^Benchmark[A-Za-z]+(/[a-z]+=[a-z0-9]+)+$`)
	for _, c := range cs {
		if seen[c.Name()] || !kv.MatchString(c.Name()) {
			t.Errorf("bad or duplicate name %q", c.Name())
		}
		seen[c.Name()] = true
	}
	if _, err := Cases("gpu"); err == nil {
		t.Error("unknown suite accepted")
	}
}

func TestRunPrintsGoBenchmarkFormat(t *testing.T) {
	var out bytes.Buffer
	err := Run(context.Background(), &out, Options{
		Suite: "all", Count: 2, Benchtime: "3x", CPU: 1,
		Filter: regexp.MustCompile(`Codec/format=fp16/op=encode/dim=512$|Aggregate/clients=32/dim=2048/workers=auto$`),
	})
	if err != nil {
		t.Fatal(err)
	}
	br := benchfmt.NewReader(strings.NewReader(out.String()), "run")
	var names []string
	for br.Scan() {
		r, ok := br.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		names = append(names, r.Name.String())
		if r.Iters != 3 {
			t.Errorf("%s ran %d iterations, want 3 (benchtime 3x)", r.Name, r.Iters)
		}
		if _, ok := r.Value("allocs/op"); !ok {
			t.Errorf("%s has no allocs/op", r.Name)
		}
		if cpu := r.GetConfig("goos"); cpu == "" {
			t.Error("no goos header")
		}
	}
	if err := br.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"Aggregate/clients=32/dim=2048/workers=auto", "Aggregate/clients=32/dim=2048/workers=auto",
		"Codec/format=fp16/op=encode/dim=512", "Codec/format=fp16/op=encode/dim=512"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("results %v, want %v (no -N suffix at --cpu 1)\n%s", names, want, out.String())
	}
	if !strings.Contains(out.String(), "pkg: github.com/sagebench/sagebench/internal/micro\n") {
		t.Errorf("missing pkg header:\n%s", out.String())
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	tests := map[string]Options{
		"suite":     {Suite: "nope"},
		"count":     {Suite: "codec", Count: -1},
		"cpu":       {Suite: "codec", CPU: -2},
		"benchtime": {Suite: "codec", Benchtime: "soon"},
		"zero x":    {Suite: "codec", Benchtime: "0x"},
	}
	for name, o := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Run(context.Background(), &out, o); err == nil || out.Len() != 0 {
				t.Errorf("err %v, output %q", err, out.String())
			}
		})
	}
	err := Run(context.Background(), &bytes.Buffer{}, Options{Suite: "codec", Filter: regexp.MustCompile("Aggregate")})
	if !errors.Is(err, ErrNoMatch) {
		t.Errorf("filter matching nothing: %v, want ErrNoMatch", err)
	}
}

func TestRunStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Run(ctx, &bytes.Buffer{}, Options{Suite: "codec", Benchtime: "1x"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestSumFloorMatchesPlainSum(t *testing.T) {
	v := randomFloats(1000, 3)
	for _, n := range []int{0, 1, 31, 32, 33, 63, 64, 65, 100, 1000} {
		var want float64
		for _, x := range v[:n] {
			want += float64(x)
		}
		got := float64(sumFloor(v[:n]))
		if d := got - want; d > 1e-4 || d < -1e-4 {
			t.Errorf("sumFloor of %d values = %v, want %v", n, got, want)
		}
	}
}
