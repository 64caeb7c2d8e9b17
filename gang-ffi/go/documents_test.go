package gang_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gang "example.invalid/gang/gang-ffi/go"
)

// The documents in examples/scenarios/invalid/ are refused when parsed, with the error
// expected.json names (duplicate map keys, nesting beyond the parser's limit).
func TestInvalidDocumentsAreRefused(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "scenarios", "invalid")
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var expected struct {
		Documents map[string]struct {
			ErrorKind       string   `json:"error_kind"`
			ErrorField      *string  `json:"error_field"`
			MessageContains []string `json:"message_contains"`
		} `json:"documents"`
	}
	if err := json.Unmarshal(raw, &expected); err != nil {
		t.Fatal(err)
	}
	if len(expected.Documents) < 5 {
		t.Fatalf("only %d documents", len(expected.Documents))
	}
	for name, want := range expected.Documents {
		text, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s, err := gang.ParseScenario(text)
		if err == nil {
			s.Close()
			t.Errorf("%s: parsed, want %s", name, want.ErrorKind)
			continue
		}
		var ge *gang.Error
		if !errors.As(err, &ge) {
			t.Fatalf("%s: %T %v", name, err, err)
		}
		if ge.Kind != want.ErrorKind {
			t.Errorf("%s: kind %q, want %q (%v)", name, ge.Kind, want.ErrorKind, err)
		}
		if want.ErrorField != nil && ge.Field != *want.ErrorField {
			t.Errorf("%s: field %q, want %q", name, ge.Field, *want.ErrorField)
		}
		for _, sub := range want.MessageContains {
			if !strings.Contains(err.Error(), sub) {
				t.Errorf("%s: %q not in %q", name, sub, err.Error())
			}
		}
	}
}
