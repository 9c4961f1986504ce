package tokenizer

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRef(t *testing.T) {
	o200k, err := Load(O200K)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		ref      *Ref
		spec     string
		wantName string
	}{
		{"nil is the default", nil, "", DefaultName},
		{"a builtin", NewRef(O200K), O200K, O200K},
		{"already loaded", RefOf(O200K, o200k), O200K, O200K},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.ref.Spec(); got != tc.spec {
				t.Errorf("Spec() = %q, want %q", got, tc.spec)
			}
			tok, err := tc.ref.Get()
			if err != nil {
				t.Fatal(err)
			}
			if tok.Name() != tc.wantName {
				t.Errorf("Get().Name() = %q, want %q", tok.Name(), tc.wantName)
			}
			other, err := tc.ref.Loader()(CL100K)
			if err != nil || other.Name() != CL100K {
				t.Errorf("Loader()(cl100k_base) = %v, %v", other, err)
			}
		})
	}
}

// TestRefLoadsOnce: a tokenizer.json is parsed on the first Get only, and
// a Ref's Loader hands out that same tokenizer for its spec.
func TestRefLoadsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := NewRef(path)
	if _, err := r.Get(); err == nil {
		t.Fatal("a broken tokenizer.json loaded")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err1 := r.Get()
	_, err2 := r.Loader()(path)
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Errorf("second Get = %v, Loader = %v: want the first load's error again", err1, err2)
	}
	a, _ := NewRef(O200K).Get()
	r = RefOf(O200K, a)
	b, _ := r.Loader()(O200K)
	if a != b {
		t.Error("Loader loaded the Ref's own spec again")
	}
}
