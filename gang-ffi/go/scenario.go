package gang

// #include <stdlib.h>
// #include "gang.h"
import "C"

import (
	"runtime"
	"strings"
)

// Scenario is a parsed scenario document (the format of examples/scenarios): a
// cluster, a gang, and optionally what must come out. Close it when done.
type Scenario struct {
	ptr *C.gang_scenario
}

// ParseScenario parses a scenario document. Errors: ErrInvalidScenario naming the JSON
// path. The cluster and gang are validated later, by Inventory and when placing.
func ParseScenario(json []byte) (*Scenario, error) {
	data, n := doc(json)
	var p *C.gang_scenario
	var cerr *C.gang_error
	rc := C.gang_scenario_from_json(data, n, &p, &cerr)
	runtime.KeepAlive(json)
	if err := fromC(rc, cerr, "gang_scenario_from_json"); err != nil {
		return nil, err
	}
	s := &Scenario{ptr: p}
	runtime.SetFinalizer(s, (*Scenario).Close)
	return s, nil
}

// live is nil for a scenario that can be used, else the error of a nil
// (ErrNullArgument) or closed (ErrClosed) one, naming method.
func (s *Scenario) live(method string) error {
	if s == nil {
		return nilHandle(method, "scenario")
	}
	if s.ptr == nil {
		return closedHandle(method, "scenario")
	}
	return nil
}

// Close frees the scenario. It is idempotent.
func (s *Scenario) Close() {
	if s == nil || s.ptr == nil {
		return
	}
	C.gang_scenario_free(s.ptr)
	s.ptr = nil
	runtime.SetFinalizer(s, nil)
}

// Inventory builds the scenario's inventory (errors as NewInventory).
func (s *Scenario) Inventory() (*Inventory, error) {
	if err := s.live("Scenario.Inventory"); err != nil {
		return nil, err
	}
	var p *C.gang_inventory
	var cerr *C.gang_error
	rc := C.gang_scenario_inventory(s.ptr, &p, &cerr)
	runtime.KeepAlive(s)
	if err := fromC(rc, cerr, "gang_scenario_inventory"); err != nil {
		return nil, err
	}
	return newInventory(p), nil
}

// Gang returns a copy of the scenario's gang.
func (s *Scenario) Gang() (*Gang, error) {
	if err := s.live("Scenario.Gang"); err != nil {
		return nil, err
	}
	var p *C.gang_gang
	rc := C.gang_scenario_gang(s.ptr, &p)
	runtime.KeepAlive(s)
	if err := check(rc, "gang_scenario_gang"); err != nil {
		return nil, err
	}
	return newGang(p), nil
}

// Report is the core's own check of a scenario.
type Report struct {
	// Passed: every expectation of the scenario's expect block held.
	Passed bool
	// Failures, one per unmet expectation.
	Failures []string
	// Outcome is the result as the core's JSON document: a placement or diagnosis
	// document, or an error document when the scenario's input is invalid. Placement.JSON,
	// Diagnosis.JSON and the same scenario run through this package give the same bytes.
	Outcome string
}

// Check runs the scenario in the core and checks its expectations.
func (s *Scenario) Check() (Report, error) {
	if err := s.live("Scenario.Check"); err != nil {
		return Report{}, err
	}
	var passed C.bool
	var failures, outcome *C.gang_string
	rc := C.gang_scenario_check(s.ptr, &passed, &failures, &outcome)
	runtime.KeepAlive(s)
	if err := check(rc, "gang_scenario_check"); err != nil {
		return Report{}, err
	}
	defer C.gang_string_free(failures)
	defer C.gang_string_free(outcome)
	var f, o C.gang_str
	mustOK(C.gang_string_view(failures, &f), "gang_string_view")
	mustOK(C.gang_string_view(outcome, &o), "gang_string_view")
	r := Report{Passed: bool(passed), Outcome: goStr(o)}
	if text := goStr(f); text != "" {
		r.Failures = strings.Split(text, "\n")
	}
	return r, nil
}
