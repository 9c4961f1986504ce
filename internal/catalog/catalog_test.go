package catalog

import (
	"fmt"
	"strings"
	"testing"
)

func TestSelect(t *testing.T) {
	cases := []struct {
		names []string
		all   bool
		want  string
		err   string
	}{
		{[]string{"q2"}, false, "Q2", ""},
		{[]string{"Q3,q1", "Q2"}, false, "Q1 Q2 Q3", ""},
		{[]string{"controlmix", "control_plane", "Q2"}, false, "Q2", ""},
		{nil, true, "Q1 Q2 Q3 Q4 Q5 Q6 Q7 Q8", ""},
		{[]string{"Q9"}, false, "", `unknown experiment "Q9"; choose one of Q1, Q2`},
		{[]string{"q2,"}, false, "Q2", ""},
	}
	for _, c := range cases {
		specs, err := Select(c.names, c.all)
		var ids []string
		for _, s := range specs {
			ids = append(ids, s.ID)
		}
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: err %v", c.names, err)
			}
			continue
		}
		if err != nil || strings.Join(ids, " ") != c.want {
			t.Errorf("%v all=%v: %v, %v; want %s", c.names, c.all, ids, err, c.want)
		}
	}
}

func TestCatalogEntries(t *testing.T) {
	for i, s := range Catalog() {
		if s.ID != fmt.Sprintf("Q%d", i+1) || s.Name == "" || s.Entry == "" || s.Description == "" {
			t.Errorf("catalog entry %d incomplete: %+v", i, s)
		}
		if s.Implemented() {
			w := s.New(true)
			if err := w.Config().Validate(); err != nil {
				t.Errorf("%s quick defaults invalid: %v", s.ID, err)
			}
			if err := s.New(false).Config().Validate(); err != nil {
				t.Errorf("%s full defaults invalid: %v", s.ID, err)
			}
		}
	}
}

func ExampleSelect() {
	specs, _ := Select([]string{"q2", "Q1"}, false)
	for _, s := range specs {
		fmt.Println(s.ID, s.Name, s.Entry)
	}
	// Output:
	// Q1 PipelineChain e2e_pipeline
	// Q2 ControlMix control_plane
}
