package strictyaml

import (
	"strings"
	"testing"
)

func TestUnmarshal(t *testing.T) {
	type cfg struct {
		Name  string `yaml:"name"`
		Items []int  `yaml:"items"`
	}
	tests := []struct {
		name    string
		yaml    string
		wantErr string // "" = ok
	}{
		{"valid", "name: a\nitems: [1, 2]\n", ""},
		{"unknown key", "name: a\nnmae: b\n", `unknown field "nmae"`},
		{"wrong type", "items: x\n", "items"},
		{"tagged mapping where a list goes", "items:\n !0\n    0: 0\n", "malformed YAML"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c cfg
			err := Unmarshal([]byte(tc.yaml), &c)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Unmarshal: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Unmarshal error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte("name: a\nitems: [1]\n"))
	f.Add([]byte("items:\n !0\n    0: 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c struct {
			Name  string         `yaml:"name"`
			Items []int          `yaml:"items"`
			M     map[string]any `yaml:"m"`
		}
		_ = Unmarshal(data, &c) // must not panic
	})
}
