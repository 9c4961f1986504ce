package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// path is one way to reach the engine, with what its requests saw.
type path struct {
	name     string
	url      string
	mu       sync.Mutex
	lat      []time.Duration
	failed   atomic.Int64
	firstErr atomic.Value
}

func overhead(args []string) error {
	fs := flag.NewFlagSet("overhead", flag.ContinueOnError)
	direct := fs.String("direct", "", "engine base URL (called directly)")
	gw := fs.String("gateway", "", "gateway base URL (in front of the same engine)")
	px := fs.String("proxy", "", "reverse proxy base URL in front of the same engine (optional)")
	rate := fs.Int("rate", 2000, "requests per second in total, rotating between the paths")
	dur := fs.Duration("d", 10*time.Second, "duration (bounded)")
	cpu := fs.String("cpu", "", "name=PID,...: report each process's CPU per request (engine: all requests; gateway, proxy: their path's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *direct == "" || *gw == "" || *dur > 2*time.Minute || *rate <= 0 {
		return errors.New("-direct and -gateway required; -d at most 2m; -rate > 0")
	}
	paths := []*path{{name: "direct", url: *direct}, {name: "gateway", url: *gw}}
	if *px != "" {
		paths = append(paths, &path{name: "proxy", url: *px})
	}
	procs, err := parsePIDs(*cpu)
	if err != nil {
		return err
	}
	c := client(4096)
	warm(c, paths)
	before := cpuTimes(procs)
	n, el := drive(c, paths, *rate, *dur)
	after := cpuTimes(procs)
	report(paths, *rate, n, el)
	for _, name := range sortedNames(procs) {
		served := n
		for _, p := range paths {
			if p.name == name {
				served = len(p.lat)
			}
		}
		d := after[name] - before[name]
		fmt.Printf("overhead: cpu %-7s %.2fs = %.0f us/request (%d requests)\n", name, d.Seconds(), float64(d.Microseconds())/float64(max(served, 1)), served)
	}
	return nil
}

var body = []byte(`{"input":"what is the capital of france"}`)

// warm opens connections on every path before timing starts.
func warm(c *http.Client, paths []*path) {
	var wg sync.WaitGroup
	for _, p := range paths {
		for range 32 {
			wg.Add(1)
			go func() { defer wg.Done(); _ = post(c, p.url) }()
		}
	}
	wg.Wait()
}

// drive sends rate requests/s for dur on an open-loop schedule, rotating
// between the paths so they run side by side under the same conditions.
func drive(c *http.Client, paths []*path, rate int, dur time.Duration) (int, time.Duration) {
	n := int(float64(rate) * dur.Seconds())
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		p := paths[i%len(paths)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			err := post(c, p.url)
			d := time.Since(t0)
			p.mu.Lock()
			p.lat = append(p.lat, d)
			p.mu.Unlock()
			if err != nil {
				p.failed.Add(1)
				p.firstErr.CompareAndSwap(nil, err.Error())
			}
		}()
	}
	wg.Wait()
	return n, time.Since(start)
}

func post(c *http.Client, u string) error {
	resp, err := c.Post(u+"/v1/embeddings", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
	}
	return err
}

func report(paths []*path, rate, n int, el time.Duration) {
	fmt.Printf("overhead: total_rate=%d/s paths=%d requests=%d duration=%v\n", rate, len(paths), n, el.Round(time.Millisecond))
	d50, d99 := pct(paths[0].lat, 0.50), pct(paths[0].lat, 0.99)
	for _, p := range paths {
		p50, p99 := pct(p.lat, 0.50), pct(p.lat, 0.99)
		fmt.Printf("overhead: %-7s p50=%v p99=%v failed=%d\n", p.name, p50, p99, p.failed.Load())
		if e := p.firstErr.Load(); e != nil {
			fmt.Printf("overhead: first %s error: %v\n", p.name, e)
		}
		if p != paths[0] {
			fmt.Printf("overhead: added by %-7s p50=%v p99=%v\n", p.name, p50-d50, p99-d99)
		}
	}
}

func pct(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(q*float64(len(s)-1))].Round(time.Microsecond)
}

func parsePIDs(s string) (map[string]int, error) {
	out := map[string]int{}
	for _, kv := range strings.Split(s, ",") {
		if kv == "" {
			continue
		}
		name, v, ok := strings.Cut(kv, "=")
		pid, err := strconv.Atoi(v)
		if !ok || err != nil || pid <= 0 {
			return nil, fmt.Errorf("-cpu %q: want name=PID[,name=PID]", s)
		}
		out[name] = pid
	}
	return out, nil
}

func sortedNames(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cpuTimes reads each process's user+system CPU from /proc (Linux).
func cpuTimes(procs map[string]int) map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, pid := range procs {
		d, err := cpuTime(pid)
		if err != nil {
			fmt.Fprintf(os.Stderr, "stackload: cpu of %s: %v\n", name, err)
		}
		out[name] = d
	}
	return out
}

// cpuTime is utime+stime of /proc/PID/stat, in clock ticks of 10ms
// (USER_HZ is 100 on Linux).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold spaces
	if i < 0 {
		return 0, errors.New("unreadable stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	st, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, errors.New("unreadable stat times")
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// proxy runs a trivial reverse proxy in front of -to until killed.
func proxy(args []string) error {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	to := fs.String("to", "", "upstream base URL")
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (loopback)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := url.Parse(*to)
	if err != nil || u.Host == "" {
		return fmt.Errorf("-to %q: want http://host:port", *to)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 90 * time.Second}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	fmt.Printf("stackload proxy: listening on http://%s\n", ln.Addr())
	return http.Serve(ln, rp)
}
