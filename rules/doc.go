// Package rules writes vtop's judgement as a Prometheus rule file:
// recording rules for the figures the states are judged on, and one
// alerting rule per state, from the thresholds package analysis judges by
// and the metric names the catalogue's alias table declares for every
// engine and version. Prometheus then raises the alerts vtop would show,
// for a fleet vtop is not watching.
//
// The package is pure: Build returns the rule file, Write renders it.
package rules
