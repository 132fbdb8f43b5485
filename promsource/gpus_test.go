package promsource

import (
	"net/url"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// TestGPUsFromPrometheus: a real Prometheus scrapes a simulated fleet and
// each replica's dcgm-exporter page; the source reads the DCGM series at
// each refresh with one more query, however many GPUs, and builds the
// GPUs from them as the exporter's own page would.
func TestGPUsFromPrometheus(t *testing.T) {
	testutil.PrometheusTool(t, "prometheus") // skip before serving anything
	fleet, err := sim.NewFleet(sim.Options{Replicas: 3, Scenario: sim.Full, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	gpus := sim.NewGPUs(fleet)
	if err := gpus.SetFault(2, sim.GPUXID); err != nil {
		t.Fatal(err)
	}
	urls := testutil.ServeFleet(t.Context(), t, fleet)
	exporters, err := gpus.Serve(t.Context(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	var instances []string
	for _, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		instances = append(instances, pu.Host)
	}
	prom := testutil.StartPrometheus(t, itScrape, append(instances, exporters...))
	prom.WaitForWindow(itWindow + 2*itScrape)

	without := runSource(t, Config{URL: prom.URL(), Interval: itInterval, Window: itWindow})
	with := runSource(t, Config{URL: prom.URL(), Interval: itInterval, Window: itWindow, GPUs: true})
	<-without.Refresh()
	<-with.Refresh()
	before, beforeWithout := with.Stats().Requests, without.Stats().Requests
	<-without.Refresh()
	<-with.Refresh()
	perRefresh, perRefreshWithout := with.Stats().Requests-before, without.Stats().Requests-beforeWithout
	if perRefresh != perRefreshWithout+1 {
		t.Errorf("a refresh costs %d requests with GPUs, %d without: want exactly one more", perRefresh, perRefreshWithout)
	}
	if gs, note := without.GPUs(); len(gs) != 0 {
		t.Errorf("a source not asked for GPUs read %d (note %q)", len(gs), note)
	}

	gs, note := with.GPUs()
	if note != "" || len(gs) != 3 {
		t.Fatalf("%d GPUs, note %q; want one per simulated replica", len(gs), note)
	}
	want := map[string]int{"sim-node-0": 0, "sim-node-1": 0, "sim-node-2": 79}
	for _, g := range gs {
		xid, ok := want[g.Host]
		if !ok || g.XID != xid || g.Model != "NVIDIA H100 80GB HBM3" || g.Source != "Prometheus "+prom.URL() {
			t.Errorf("GPU %+v: want host sim-node-N, XID %d, the H100, from Prometheus", g, xid)
		}
		if !(g.Utilization > 0.9) || !(g.MemoryUsedBytes > 16e9) || g.MemoryTotalBytes != 81559<<20 {
			t.Errorf("GPU on %s: utilisation %v, memory %v of %v; a full replica's GPU is busy and holds the weights", g.Host, g.Utilization, g.MemoryUsedBytes, g.MemoryTotalBytes)
		}
		// Prometheus scraped the exporter directly: its pod label is the
		// workload's, but only exported_pod says so for sure.
		if g.Pod != "" {
			t.Errorf("GPU on %s: pod %q read from a label Prometheus may have set itself", g.Host, g.Pod)
		}
	}
}

// A failed DCGM query's note gives the problem without the server's
// name: its GPU source is named after the server already, and the two
// together read "Prometheus http://…: DCGM series: connection refused",
// not the name twice.
func TestGPUNoteNamesTheServerOnce(t *testing.T) {
	s := testSource(t, Config{URL: "http://" + testutil.ClosedPort(t), GPUs: true})
	s.refresh(t.Context())
	_, note := s.GPUs()
	if note != "DCGM series: connection refused" {
		t.Errorf("note %q, want %q", note, "DCGM series: connection refused")
	}
}
