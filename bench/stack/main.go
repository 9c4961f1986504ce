// Command stackload drives a running reference stack for the speed
// targets in docs/serve.md. It is bounded in time and count.
//
//	stackload streams  -url URL -c 1000 -d 10s -max-tokens 64
//	    C concurrent streaming chat completions, each client looping;
//	    prints tokens/s, peak streams and the server's RSS per stream
//	    (from its /metrics, idle vs under load).
//	stackload overhead -direct URL -gateway URL [-proxy URL] -rate 2000 -d 10s [-cpu name=PID,...]
//	    embedding requests on an open-loop schedule at RATE/s in total,
//	    rotating between an engine called directly, the gateway in front
//	    of it and (optionally) a trivial reverse proxy in front of it;
//	    prints p50/p99 of each, the difference from direct, and the CPU
//	    each named process spent per request it served.
//	stackload proxy -to URL [-listen 127.0.0.1:0]
//	    a trivial Go reverse proxy (net/http/httputil) in front of URL: the
//	    floor of one more loopback HTTP hop, for the overhead comparison.
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
	case "proxy":
		err = proxy(os.Args[2:])
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
	pid := fs.Int("pid", 0, "the server's process id: report its CPU per streamed token")
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
	cpu0, _ := cpuTime(*pid)
	writes0, _ := metric(c, *url, "sagebench_gateway_stream_writes_total")
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
	if writes1, err := metric(c, *url, "sagebench_gateway_stream_writes_total"); err == nil {
		fmt.Printf("streams: server_writes=%.0f tokens_per_write=%.3f\n", writes1-writes0, float64(tokens.Load())/max(writes1-writes0, 1))
	}
	if *pid > 0 {
		cpu1, err := cpuTime(*pid)
		if err != nil {
			return err
		}
		d := cpu1 - cpu0
		fmt.Printf("streams: server_cpu=%.2fs per_token_us=%.2f\n", d.Seconds(), float64(d.Nanoseconds())/1e3/float64(max(tokens.Load(), 1)))
	}
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
