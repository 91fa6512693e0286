package testtools

import (
	"testing"

	"gopkg.in/yaml.v3"
)

// AnsiblePlay is what the tests read back of a play of a generated
// playbook (the plan-ansible format).
type AnsiblePlay struct {
	Name              string           `yaml:"name"`
	Hosts             []string         `yaml:"hosts"`
	Serial            int              `yaml:"serial"`
	AnyErrorsFatal    bool             `yaml:"any_errors_fatal"`
	MaxFailPercentage *int             `yaml:"max_fail_percentage"`
	Become            bool             `yaml:"become"`
	GatherFacts       bool             `yaml:"gather_facts"`
	Tasks             []map[string]any `yaml:"tasks"`
}

// ReadPlays parses a playbook's plays.
func ReadPlays(t testing.TB, playbook []byte) []AnsiblePlay {
	t.Helper()
	var plays []AnsiblePlay
	if err := yaml.Unmarshal(playbook, &plays); err != nil {
		t.Fatalf("the playbook does not parse: %v", err)
	}
	return plays
}
