package gang

// PlaceLoopInC is exported to the tests only: the benchmarks' in-process C baseline.
var PlaceLoopInC = placeLoopInC
