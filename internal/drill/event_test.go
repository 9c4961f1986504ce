package drill

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
)

func validConfig() Config {
	return Config{Recovery: Recovery{Metric: "ttft_p99", Bound: time.Second, Hold: 2 * time.Second}}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
		want string // substring of the error; "" = valid
	}{
		{"empty", func(*Config) {}, ""},
		{"kill", func(c *Config) { c.Events = []Event{{At: time.Second, Action: Kill, Engine: "e"}} }, ""},
		{"unknown action", func(c *Config) { c.Events = []Event{{Action: "explode", Engine: "e"}} }, `q.events[0]: action "explode"`},
		{"kill without engine", func(c *Config) { c.Events = []Event{{Action: Kill}} }, "engine is required"},
		{"slowdown factor 0", func(c *Config) { c.Events = []Event{{Action: Slowdown, Engine: "e"}} }, "factor must be"},
		{"policy unnamed", func(c *Config) { c.Events = []Event{{Action: Policy}} }, "name the policy"},
		{"add without profile", func(c *Config) { c.Events = []Event{{Action: Add, Engine: "e", Kind: "llm"}} }, "profile and kind"},
		{"drop 0", func(c *Config) { c.Events = []Event{{Action: Drop}} }, "count must be"},
		{"duration on kill", func(c *Config) { c.Events = []Event{{Action: Kill, Engine: "e", Duration: time.Second}} }, "duration applies"},
		{"after the load", func(c *Config) {
			c.Events = []Event{{At: 9 * time.Second, Action: Pause, Engine: "e", Duration: 2 * time.Second}}
		}, "after the load"},
		{"hook both", func(c *Config) {
			c.Hooks = map[string]Hook{Kill: {Exec: []string{"true"}, HTTP: &HTTPHook{Method: "POST", URL: "http://x"}}}
		}, "exactly one"},
		{"hook unknown", func(c *Config) { c.Hooks = map[string]Hook{"nuke": {Exec: []string{"true"}}} }, "hooks.nuke"},
		{"hook bad url", func(c *Config) { c.Hooks = map[string]Hook{Kill: {HTTP: &HTTPHook{Method: "POST", URL: "ftp://x"}}} }, "http(s) url"},
		{"bad metric", func(c *Config) { c.Recovery.Metric = "p100" }, "recovery.metric"},
		{"bound 0", func(c *Config) { c.Recovery.Bound = 0 }, "bound must be"},
		{"hold below the window width", func(c *Config) { c.Recovery.Hold = time.Second }, "q.recovery.hold 1s: must be at least the window width"},
		{"hold 0 is one window", func(c *Config) { c.Recovery.Hold = 0 }, ""},
		{"gateway kill", func(c *Config) { c.Events = []Event{{At: time.Second, Action: Kill, Engine: Gateway}} }, ""},
		{"gateway drain", func(c *Config) { c.Events = []Event{{At: time.Second, Action: Drain, Engine: Gateway}} }, "the gateway takes"},
		{"cut", func(c *Config) { c.Events = []Event{{At: time.Second, Action: Cut}} }, ""},
		{"slots on a kill", func(c *Config) { c.Events = []Event{{Action: Kill, Engine: "e", Slots: 2}} }, "slots: applies to add only"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.edit(&c)
			err := c.Validate("q", 10*time.Second)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v; want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	got := Expand([]Event{
		{At: 5 * time.Second, Action: Slowdown, Engine: "e", Factor: 4, Duration: 2 * time.Second},
		{At: time.Second, Action: Pause, Engine: "e", Duration: 3 * time.Second},
	})
	want := []Event{
		{At: time.Second, Action: Pause, Engine: "e"},
		{At: 4 * time.Second, Action: Resume, Engine: "e", undoOf: 1},
		{At: 5 * time.Second, Action: Slowdown, Engine: "e", Factor: 4},
		{At: 7 * time.Second, Action: Slowdown, Engine: "e", Factor: 1, undoOf: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Expand:\n got %+v\nwant %+v", got, want)
	}
	if k, ok := got[3].UndoOf(); !ok || k != 2 || !got[3].Repair() || got[2].Repair() {
		t.Errorf("the factor-1 slowdown undoes event %d (%v), repair %v", k, ok, got[3].Repair())
	}
}

func TestAccount(t *testing.T) {
	req := func(ok bool, class string) record.Request {
		return record.Request{Kind: "request", ID: class, OK: ok, ErrorClass: class}
	}
	cases := []struct {
		name string
		sent int
		reqs []record.Request
		want Accounting
	}{
		{"all ok", 2, []record.Request{req(true, ""), req(true, "")}, Accounting{Sent: 2, OK: 2}},
		{"explicit errors", 3, []record.Request{req(true, ""), req(false, "http_5xx"), req(false, "connect")},
			Accounting{Sent: 3, OK: 1, Explicit: 2}},
		{"silent", 4, []record.Request{req(false, "timeout"), req(false, "truncated"), req(false, "reset"), req(true, "")},
			Accounting{Sent: 4, OK: 1, Lost: 3, ByClass: map[string]int{"timeout": 1, "truncated": 1, "reset": 1}, LostIDs: []string{"timeout", "truncated", "reset"}}},
		{"no record", 3, []record.Request{req(true, "")}, Accounting{Sent: 3, OK: 1, Lost: 2, ByClass: map[string]int{"no_record": 2}}},
		{"stages ignored", 1, []record.Request{req(true, ""), {Kind: "stage"}}, Accounting{Sent: 1, OK: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Account(tc.sent, tc.reqs); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestHTTPHook: the hook's URL and body get the event's values and its
// status is recorded; a non-2xx answer is an error.
func TestHTTPHook(t *testing.T) {
	var gotPath, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotPath, gotBody = r.URL.Path, string(b)
		if strings.Contains(gotPath, "bad") {
			http.Error(w, "no", http.StatusConflict)
		}
	}))
	defer srv.Close()
	a := hooked{hooks: map[string]Hook{Slowdown: {HTTP: &HTTPHook{Method: "POST", URL: srv.URL + "/slow/{engine}", Body: `{"factor":{factor}}`}}},
		next: admin{}, client: srv.Client()}
	d := a.Do(context.Background(), Event{Action: Slowdown, Engine: "llm-1", Factor: 2.5})
	if d.Err != nil || d.HTTPStatus != 200 || d.Via != "http" || gotPath != "/slow/llm-1" || gotBody != `{"factor":2.5}` {
		t.Fatalf("done %+v path %q body %q", d, gotPath, gotBody)
	}
	if d := a.Do(context.Background(), Event{Action: Slowdown, Engine: "bad", Factor: 2}); d.Err == nil || d.HTTPStatus != 409 {
		t.Fatalf("409 answer: %+v", d)
	}
	if d := a.Do(context.Background(), Event{Action: Kill, Engine: "x"}); !d.Unsupported {
		t.Fatalf("kill without hook on a URL target: %+v", d)
	}
}

// TestExecHookStatus: a failing command is an error with its exit status.
func TestExecHookStatus(t *testing.T) {
	d := runExec(context.Background(), []string{"sh", "-c", "echo {engine}; exit 3"}, Event{Engine: "e1"})
	if d.Err == nil || d.ExitStatus == nil || *d.ExitStatus != 3 || d.Output != "e1" {
		t.Fatalf("%+v", d)
	}
}

// TestExpandLinksRepairs: a listed restart ends the kill before it on the
// same engine, a resume the pause; a repair with no fault before it, or
// on another engine, ends nothing.
func TestExpandLinksRepairs(t *testing.T) {
	got := Expand([]Event{
		{At: time.Second, Action: Kill, Engine: "a"},
		{At: 2 * time.Second, Action: Kill, Engine: "b"},
		{At: 3 * time.Second, Action: Restart, Engine: "a"},
		{At: 4 * time.Second, Action: Resume, Engine: "a"},
		{At: 5 * time.Second, Action: Pause, Engine: "b", Duration: time.Second},
	})
	want := map[int]int{2: 0, 5: 4} // undo → fault
	for k, e := range got {
		j, ok := e.UndoOf()
		if w, linked := want[k]; ok != linked || (ok && j != w) {
			t.Errorf("event %d (%s): undo of %d (%v); want %d (%v)", k, e, j, ok, w, linked)
		}
	}
}
