package load

import (
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// ScheduleConfig is filled from YAML in strict mode by the run command;
// durations are Go duration strings.
func TestScheduleConfigYAML(t *testing.T) {
	src := "process: onoff\nrate: 10\nburst_rate: 200\nburst_length: 500ms\nburst_period: 2s\nduration: 1m\n"
	var cfg ScheduleConfig
	if err := yaml.UnmarshalWithOptions([]byte(src), &cfg, yaml.Strict()); err != nil {
		t.Fatal(err)
	}
	want := ScheduleConfig{Process: "onoff", Rate: 10, BurstRate: 200, BurstLength: 500 * time.Millisecond, BurstPeriod: 2 * time.Second, Duration: time.Minute}
	if cfg != want {
		t.Fatalf("got %+v, want %+v", cfg, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	err := yaml.UnmarshalWithOptions([]byte("process: poisson\nrat: 5\n"), &cfg, yaml.Strict())
	if err == nil || !strings.Contains(err.Error(), "rat") {
		t.Fatalf("unknown key accepted: %v", err)
	}
}
