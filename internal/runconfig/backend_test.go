package runconfig

import (
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/workload"
	"github.com/sagebench/sagebench/internal/workload/q1"
	"github.com/sagebench/sagebench/internal/workload/q2"
)

// TestWorkloadHashMatchesAcrossBackends: sage and ray runs of the same
// workload, seed and config share workload_hash (so aggregates can put
// them side by side) while config_hash still tells them apart.
func TestWorkloadHashMatchesAcrossBackends(t *testing.T) {
	resolve := func(backend, addr string, seed int64) Resolved {
		t.Helper()
		s := DefaultShared()
		s.Quick, s.Backend, s.Ray.Address, s.Seed = true, backend, addr, seed
		r, _, err := Resolve(q1.Spec(), s, nil, workload.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	sage := resolve(BackendSage, "", 42)
	tests := []struct {
		name      string
		r         Resolved
		sameWork  bool
		sameConfg bool
	}{
		{"sage again", resolve(BackendSage, "", 42), true, true},
		{"ray", resolve(BackendRay, "http://127.0.0.1:8265", 42), true, false},
		{"ray on another cluster", resolve(BackendRay, "http://10.0.0.9:8265", 42), true, false},
		{"ray, another seed", resolve(BackendRay, "http://127.0.0.1:8265", 7), false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if (tc.r.WorkloadHash == sage.WorkloadHash) != tc.sameWork || (tc.r.ConfigHash == sage.ConfigHash) != tc.sameConfg {
				t.Errorf("workload_hash %s / config_hash %s vs sage %s / %s: want same workload %v, same config %v",
					tc.r.WorkloadHash, tc.r.ConfigHash, sage.WorkloadHash, sage.ConfigHash, tc.sameWork, tc.sameConfg)
			}
			if len(tc.r.WorkloadHash) != 64 {
				t.Errorf("workload_hash %q: want sha256 hex", tc.r.WorkloadHash)
			}
		})
	}
	if _, ok := resolve(BackendRay, "http://127.0.0.1:8265", 42).Workload.(interface {
		DescribeJob(int64, int) (string, error)
	}); !ok {
		t.Errorf("Q1 on ray is not its Ray form")
	}
}

func TestBackendRayValidation(t *testing.T) {
	tests := []struct {
		name     string
		spec     workload.Spec
		addr     string
		resolve  string // "" = resolves
		runnable string // "" = runnable
	}{
		{"Q1 with an address", q1.Spec(), "http://127.0.0.1:8265", "", ""},
		{"Q1 without an address (dry run only)", q1.Spec(), "", "", "ray.address is empty"},
		{"Q1 with a ray:// address", q1.Spec(), "ray://head:10001", "dashboard's http(s) URL", ""},
		{"Q2 has no Ray form", q2.Spec(), "http://127.0.0.1:8265", "Q2 does not run on Ray", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultShared()
			s.Backend, s.Ray.Address = BackendRay, tc.addr
			r, _, err := Resolve(tc.spec, s, nil, workload.Overrides{})
			if !matches(err, tc.resolve) {
				t.Fatalf("Resolve: %v, want %q", err, tc.resolve)
			}
			if err == nil && !matches(r.Shared.Runnable(), tc.runnable) {
				t.Fatalf("Runnable: %v, want %q", r.Shared.Runnable(), tc.runnable)
			}
		})
	}
}

func matches(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return err != nil && strings.Contains(err.Error(), want)
}

// TestRayAddressSecretsStayOut: user info in the cluster's address never
// reaches run_config or the effective YAML.
func TestRayAddressSecretsStayOut(t *testing.T) {
	s := DefaultShared()
	s.Backend, s.Ray.Address, s.Ray.Token = BackendRay, "http://bob:s3cr3t@127.0.0.1:8265", "t0ken"
	r, _, err := Resolve(q1.Spec(), s, nil, workload.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	for what, b := range map[string][]byte{"run_config": r.RunConfig, "yaml": r.YAML} {
		if strings.Contains(string(b), "s3cr3t") || strings.Contains(string(b), "t0ken") {
			t.Errorf("%s holds a secret: %s", what, b)
		}
	}
}
