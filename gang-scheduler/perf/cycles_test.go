package perf

import (
	"fmt"
	"math"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
)

// The PodGroup cycle's latency as the scheduler measures it,
// scheduler_podgroup_scheduling_algorithm_duration_seconds, is a plain Histogram, which
// component-base cannot reset (only vectors are "resettable"): upstream's harness
// resets the registry between workloads (legacyregistry.Reset) and "resets" each
// collected family on a gathered copy, so in one `go test` process every workload
// after the first reports the cycles of all the workloads before it as well. (The
// native plugins' cycles, run first, then made GangPlacement's p50/p99 look like
// theirs.) perf_test.go therefore takes this histogram before and after each workload
// and reports the quantiles of the difference: that workload's cycles only.
const algorithmMetric = "scheduler_podgroup_scheduling_algorithm_duration_seconds"

// generateMetric is the PlacementGenerate extension point's duration (a vector, which
// the harness does reset; taken the same way so that both come from one place).
const generateMetric = "scheduler_framework_extension_point_duration_seconds"

// cycleSnapshot is a histogram (several aggregated: the label sets that match) as
// cumulative counts per upper bound, the sample count and sum.
type cycleSnapshot struct {
	bounds []float64
	counts []uint64
	count  uint64
	sum    float64
}

// gatherSnapshot reads metric (summed over the series matching labels) from the
// scheduler's registry; a metric not yet observed is an empty snapshot.
func gatherSnapshot(metric string, labels map[string]string) (cycleSnapshot, error) {
	vec, err := testutil.GetHistogramVecFromGatherer(legacyregistry.DefaultGatherer, metric, labels)
	if err != nil {
		// Not registered or never observed yet: nothing before this workload.
		return cycleSnapshot{}, nil
	}
	return snapshotOf(vec)
}

func snapshotOf(vec testutil.HistogramVec) (cycleSnapshot, error) {
	var s cycleSnapshot
	for i, h := range vec {
		if i == 0 {
			for _, b := range h.Bucket {
				s.bounds = append(s.bounds, b.GetUpperBound())
				s.counts = append(s.counts, b.GetCumulativeCount())
			}
		} else {
			if len(h.Bucket) != len(s.bounds) {
				return cycleSnapshot{}, fmt.Errorf("series with %d and %d buckets", len(s.bounds), len(h.Bucket))
			}
			for j, b := range h.Bucket {
				s.counts[j] += b.GetCumulativeCount()
			}
		}
		s.count += h.GetSampleCount()
		s.sum += h.GetSampleSum()
	}
	return s, nil
}

// cycleStats are the quantiles (ms) of the samples observed between two snapshots,
// computed as the harness computes them (testutil's linear interpolation in a bucket).
type cycleStats struct {
	n             uint64
	p50, p99, avg float64
}

func (after cycleSnapshot) since(before cycleSnapshot) (cycleStats, error) {
	if after.count < before.count {
		return cycleStats{}, fmt.Errorf("histogram went back from %d to %d samples", before.count, after.count)
	}
	n := after.count - before.count
	if n == 0 {
		return cycleStats{}, nil
	}
	h := &dto.Histogram{SampleCount: &n}
	sum := after.sum - before.sum
	h.SampleSum = &sum
	for j, bound := range after.bounds {
		c := after.counts[j]
		if len(before.counts) > 0 {
			if len(before.bounds) != len(after.bounds) || before.bounds[j] != bound {
				return cycleStats{}, fmt.Errorf("bucket bounds changed between the snapshots")
			}
			c -= before.counts[j]
		}
		h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: &bound, CumulativeCount: &c})
	}
	th := testutil.Histogram{Histogram: h}
	return cycleStats{n: n, p50: th.Quantile(0.5) * 1000, p99: th.Quantile(0.99) * 1000, avg: th.Average() * 1000}, nil
}

func (s cycleStats) String() string {
	if s.n == 0 {
		return "0"
	}
	return fmt.Sprintf("%d/%.4g/%.4g/%.4g", s.n, s.p50, s.p99, s.avg)
}

// histogramOf builds a snapshot from per-bucket (not cumulative) sample counts.
func histogramOf(bounds []float64, perBucket []uint64, sum float64) cycleSnapshot {
	s := cycleSnapshot{bounds: bounds, sum: sum}
	var c uint64
	for _, n := range perBucket {
		c += n
		s.counts = append(s.counts, c)
	}
	s.count = c
	return s
}

// TestCycleStatsAreTheWorkloadsOwn: samples before the workload do not count. Before:
// 100 samples in (512, 1024] ms (an earlier workload's slow cycles). After: those plus
// 100 in (0, 1] ms. The workload's own p50 is in the first bucket, its p99 too; the
// cumulative histogram the harness reads would put p50 at the bucket edge 1 ms and p99
// near 1 s.
func TestCycleStatsAreTheWorkloadsOwn(t *testing.T) {
	bounds := []float64{0.001, 0.002, 0.512, 1.024}
	before := histogramOf(bounds, []uint64{0, 0, 0, 100}, 80)
	after := histogramOf(bounds, []uint64{100, 0, 0, 100}, 80.05)
	got, err := after.since(before)
	if err != nil {
		t.Fatal(err)
	}
	// 100 samples in (0, 1 ms]: rank 50 of 100 is half the bucket, rank 99 is 0.99 of it.
	if got.n != 100 || math.Abs(got.p50-0.5) > 1e-9 || math.Abs(got.p99-0.99) > 1e-9 || math.Abs(got.avg-0.5) > 1e-6 {
		t.Fatalf("workload's own cycles: %+v, want n=100 p50=0.5 p99=0.99 avg=0.5 (ms)", got)
	}
	whole, err := after.since(cycleSnapshot{})
	if err != nil {
		t.Fatal(err)
	}
	// Read from zero (as the harness does), the earlier workload's cycles dominate p99.
	if whole.n != 200 || whole.p50 != 1 || whole.p99 < 1000 {
		t.Fatalf("whole histogram: %+v, want n=200 p50=1 p99>=1000 (ms)", whole)
	}
	if _, err := before.since(after); err == nil {
		t.Fatal("a histogram that lost samples must be an error")
	}
	if s, err := before.since(before); err != nil || s.n != 0 || s.String() != "0" {
		t.Fatalf("no new samples: %+v %v", s, err)
	}
}
