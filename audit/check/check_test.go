package check

import (
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

func TestCheckEvaluate(t *testing.T) {
	tests := []struct {
		cond  Condition
		facts map[string]string
		want  result.Outcome
	}{
		{Condition{Fact: "f", Op: "eq", Value: "active"}, map[string]string{"f": "active"}, result.OutcomeFail},
		{Condition{Fact: "f", Op: "eq", Value: "active"}, map[string]string{"f": "inactive"}, result.OutcomePass},
		{Condition{Fact: "f", Op: "ne", Value: "1"}, map[string]string{"f": "0"}, result.OutcomeFail},
		{Condition{Fact: "f", Op: "ne", Value: "1"}, map[string]string{}, result.OutcomeSkip},
		{Condition{Fact: "f", Op: "not_in", Value: "200,absent"}, map[string]string{"f": "503"}, result.OutcomeFail},
		{Condition{Fact: "f", Op: "in", Value: "a, b"}, map[string]string{"f": "b"}, result.OutcomeFail},
		{Condition{Fact: "f", Op: "ge", Value: "10"}, map[string]string{"f": "abc"}, result.OutcomeSkip},
		{Condition{Fact: "f", Op: "lt", Value: "10"}, map[string]string{"f": "9"}, result.OutcomeFail},
		{Condition{Fact: "c", Op: "pct_of_ge", Ref: "m", Value: "80"}, map[string]string{"c": "110000", "m": "131072"}, result.OutcomeFail},
		{Condition{Fact: "c", Op: "pct_of_ge", Ref: "m", Value: "80"}, map[string]string{"c": "817", "m": "131072"}, result.OutcomePass},
		{Condition{Fact: "c", Op: "pct_of_ge", Ref: "m", Value: "80"}, map[string]string{"c": "817", "m": "absent"}, result.OutcomeSkip},
	}
	for _, tt := range tests {
		c := Check{ID: "x", When: []Condition{tt.cond}}
		if got, detail := c.Evaluate(tt.facts); got != tt.want {
			t.Errorf("%+v on %v = %s (%s), want %s", tt.cond, tt.facts, got, detail, tt.want)
		}
	}
}

func TestParseChecksRejectsBadInput(t *testing.T) {
	for name, text := range map[string]string{
		"unknown field": "- {id: a, title: t, severity: critical, summary: s, remediation: r, when: [{fact: f, op: eq, value: x}], bogus: 1}",
		"unknown op":    "- {id: a, title: t, severity: critical, summary: s, remediation: r, when: [{fact: f, op: like, value: x}]}",
		"bad severity":  "- {id: a, title: t, severity: huge, summary: s, remediation: r, when: [{fact: f, op: eq, value: x}]}",
		"no when":       "- {id: a, title: t, severity: critical, summary: s, remediation: r}",
		"duplicate id":  "- {id: a, title: t, severity: info, summary: s, remediation: r, when: [{fact: f, op: eq}]}\n- {id: a, title: t, severity: info, summary: s, remediation: r, when: [{fact: f, op: eq}]}",
	} {
		if _, err := ParseChecks("t.yaml", []byte(text)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
