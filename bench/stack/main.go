// Command stackload drives a running reference stack for the speed
// targets in docs/serve.md. It is bounded in time and count.
//
//	stackload streams  -url URL -c 1000 -d 10s -max-tokens 64
//	    C concurrent streaming chat completions, each client looping;
//	    prints tokens/s, peak streams and the server's RSS per stream
//	    (from its /metrics, idle vs under load).
//	stackload overhead -direct URL -gateway URL -rate 2000 -d 10s
//	    embedding requests on an open-loop schedule at RATE/s in total,
//	    alternating between an engine called directly and the gateway in
//	    front of it; prints
//	    p50/p99 of each and the difference.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: stackload streams|overhead [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "streams":
		err = streams(os.Args[2:])
	case "overhead":
		err = overhead(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stackload:", err)
		os.Exit(1)
	}
}

func client(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns,
		DisableCompression: true}, Timeout: 60 * time.Second}
}

func streams(args []string) error {
	fs := flag.NewFlagSet("streams", flag.ContinueOnError)
	url := fs.String("url", "", "stack base URL")
	conc := fs.Int("c", 1000, "concurrent streams")
	dur := fs.Duration("d", 10*time.Second, "load duration (bounded)")
	maxTok := fs.Int("max-tokens", 64, "max_tokens per request")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" || *dur > 2*time.Minute {
		return errors.New("-url required; -d at most 2m")
	}
	c := client(*conc)
	idleRSS, _ := metric(c, *url, "process_resident_memory_bytes")
	body := fmt.Sprintf(`{"messages":[{"role":"user","content":"benchmark prompt"}],"max_tokens":%d,"stream":true}`, *maxTok)
	var tokens, done, failed, active, peak atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), *dur)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < *conc; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				n := active.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				got, err := oneStream(ctx, c, *url, body)
				active.Add(-1)
				tokens.Add(int64(got))
				if err != nil && ctx.Err() == nil {
					failed.Add(1)
				} else if err == nil {
					done.Add(1)
				}
			}
		}()
	}
	var loadedRSS float64
	go func() { // sample RSS mid-run, when every stream is open
		select {
		case <-time.After(*dur / 2):
			loadedRSS, _ = metric(c, *url, "process_resident_memory_bytes")
		case <-ctx.Done():
		}
	}()
	<-ctx.Done()
	el := time.Since(start)
	wg.Wait()
	fmt.Printf("streams: concurrency=%d peak_open=%d duration=%v completed=%d failed=%d tokens=%d\n",
		*conc, peak.Load(), el.Round(time.Millisecond), done.Load(), failed.Load(), tokens.Load())
	fmt.Printf("streams: tokens_per_s=%.0f\n", float64(tokens.Load())/el.Seconds())
	if idleRSS > 0 && loadedRSS > 0 {
		fmt.Printf("streams: server_rss_idle_MiB=%.1f server_rss_loaded_MiB=%.1f per_stream_KiB=%.1f\n",
			idleRSS/(1<<20), loadedRSS/(1<<20), (loadedRSS-idleRSS)/float64(*conc)/1024)
	}
	return nil
}

// oneStream runs one streamed completion and counts its token chunks.
func oneStream(ctx context.Context, c *http.Client, url, body string) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	r := bufio.NewReaderSize(resp.Body, 4096)
	n := 0
	for {
		line, err := r.ReadSlice('\n')
		if bytes.HasPrefix(line, []byte(`data: {`)) && bytes.Contains(line, []byte(`"content":`)) {
			n++
		}
		if bytes.HasPrefix(line, []byte("data: [DONE]")) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// metric reads one unlabelled sample from the server's /metrics.
func metric(c *http.Client, url, name string) (float64, error) {
	resp, err := c.Get(url + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("%s not in /metrics", name)
}

func overhead(args []string) error {
	fs := flag.NewFlagSet("overhead", flag.ContinueOnError)
	direct := fs.String("direct", "", "engine base URL (called directly)")
	gw := fs.String("gateway", "", "gateway base URL (in front of the same engine)")
	rate := fs.Int("rate", 2000, "requests per second in total, alternating between the two paths")
	dur := fs.Duration("d", 10*time.Second, "duration (bounded)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *direct == "" || *gw == "" || *dur > 2*time.Minute || *rate <= 0 {
		return errors.New("-direct and -gateway required; -d at most 2m; -rate > 0")
	}
	c := client(4096)
	body := []byte(`{"input":"what is the capital of france"}`)
	n := int(float64(*rate) * dur.Seconds())
	lat := [2][]time.Duration{}
	var failed [2]atomic.Int64
	var firstErr [2]atomic.Value
	var mu sync.Mutex
	interval := time.Second / time.Duration(*rate)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		p := i % 2 // alternate paths: side by side under the same conditions
		u := [2]string{*direct, *gw}[p]
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			resp, err := c.Post(u+"/v1/embeddings", "application/json", bytes.NewReader(body))
			if err == nil {
				var b []byte
				b, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil && resp.StatusCode != 200 {
					err = fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
				}
			}
			d := time.Since(t0)
			mu.Lock()
			lat[p] = append(lat[p], d)
			mu.Unlock()
			if err != nil {
				failed[p].Add(1)
				firstErr[p].CompareAndSwap(nil, err.Error())
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	p50d, p99d := pct(lat[0], 0.50), pct(lat[0], 0.99)
	p50g, p99g := pct(lat[1], 0.50), pct(lat[1], 0.99)
	fmt.Printf("overhead: total_rate=%d/s requests=%d duration=%v failed_direct=%d failed_gateway=%d\n",
		*rate, n, el.Round(time.Millisecond), failed[0].Load(), failed[1].Load())
	for p, name := range []string{"direct", "gateway"} {
		if e := firstErr[p].Load(); e != nil {
			fmt.Printf("overhead: first %s error: %v\n", name, e)
		}
	}
	fmt.Printf("overhead: direct  p50=%v p99=%v\n", p50d, p99d)
	fmt.Printf("overhead: gateway p50=%v p99=%v\n", p50g, p99g)
	fmt.Printf("overhead: added   p50=%v p99=%v\n", p50g-p50d, p99g-p99d)
	return nil
}

func pct(d []time.Duration, q float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(q*float64(len(s)-1))].Round(time.Microsecond)
}
