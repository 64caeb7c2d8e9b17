"""A reference simulator, written from gang-sim's documented event semantics (its README,
"Event semantics", and the crate docs) and nothing else, for small cases.

Placement questions go to gang-core through ``gang.Inventory`` (``find``, ``reserve``,
``release``): the placement engine is the shared truth. The clock, the event order, the
queue, readiness, backoff, cancellation, run time by span and the accounting are this
file's own, in plain Python, kept as simple as the text allows.

Covered: one role per job (``members`` x ``gpus``, optionally ``min_members``), the
policies ``required(L)``, ``preferred(L)``, ``unconstrained``, ``timed(L, T)``, the ``fifo`` and
``backfill`` queues with priorities, readiness (``init_time``, ``timeout`` or none, members that always fail to
initialise, backoff, ``max_attempts``), cancellation, never-fits jobs, slowdown by the
highest level spanned, a horizon. Not covered (the cross-check does not generate them):
random init failures, random node failures, spread, no-gang.
Scheduled node failures are covered, with restart from the last checkpoint or
replacement inside the domain (with or without a replace timeout).

The rules, as read (quotations from the docs):

- "Time is integer milliseconds; inputs are rounded to the nearest."
- "Events at one time are handled in class order finish, cancel, repair, fail, ready,
  timeout, requeue, relax, arrive, then by job (trace order), then by scheduling order.
  A timer of a state the job has left is ignored and does not move the clock."
- "After all events of a time, if anything changed, one pass": the queue "(priority,
  then entry order; a re-entering job goes behind)" is placed "job by job until one
  does not fit (the head)"; fifo stops there. "Events a pass schedules for the current
  time (a ready with init_time 0) are handled next, at the same time, followed by
  another pass." With backfill, "every later job that fits on its own is placed by
  gang-core's backfill rule: only on nodes where no role of the head fits a member now".
- "Admitted: members initialise for init_time; each fails ... or always
  (failing_members). All ready -> running at the slowdown of the placement's span; run
  time is remaining x slowdown, rounded to the millisecond. Not all ready at timeout
  after admission -> release everything; a readiness failure; failed after
  max_attempts, else backoff min(base x factor^(n-1), max) then back in the queue."
- "Cancel: waiting -> nothing held, nothing released; otherwise release everything."
- "Never fits: a job that does not fit the cluster as given (no reservations, no
  failures) ... ends never_fits at submission."
- "End: all jobs done, or the horizon, or only the failure process left (jobs still
  waiting or deadlocked end unfinished)."
- Slowdown "columns are by the highest level a placement spans: one node, one domain of
  the innermost level, the next level, ...; the last value applies to anything wider
  (and to the whole cluster)". Defaults: low 1, 1.05, 1.10, 1.25; medium 1, 1.5, 1.8,
  2.5; high 1, 2.5, 3.5, 6.0.
- Records: ``first_admitted`` (first admission), ``admitted`` (last), ``all_ready``
  (first time every member was ready), ``end``, ``completion = end - submit`` (completed
  jobs), ``queue_delay = first_admitted - submit``, ``time_to_ready = all_ready -
  submit``, ``run_time`` (seconds spent running), GPU-hours held.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Any

import gang

FINISH, CANCEL, REPAIR, FAIL, READY, TIMEOUT, REQUEUE, RELAX, ARRIVE = range(9)

TABLES = {
    "low": [1.0, 1.05, 1.10, 1.25],
    "medium": [1.0, 1.5, 1.8, 2.5],
    "high": [1.0, 2.5, 3.5, 6.0],
}

GPU = "nvidia.com/gpu"
HOST = "kubernetes.io/hostname"  # every node carries it (see Reference.__init__)


def ms(seconds: float) -> int:
    """Seconds to integer milliseconds, rounded to the nearest."""
    return int(math.floor(seconds * 1000.0 + 0.5))


def sec(t: int | None) -> float | None:
    return None if t is None else t / 1000.0


@dataclass
class Job:
    index: int
    id: str
    submit: int
    duration: int
    members: int
    min_members: int | None
    gpus: int
    policy: str
    table: list[float]
    priority: int
    cancel: int | None
    failing: int
    checkpoint: int | None
    remaining: float = 0.0  # ideal work left, ms
    nodes: frozenset[str] = frozenset()  # where its members are
    node_failures: int = 0
    restarts: int = 0
    lost_ms: int = 0
    recovery: str = "restart"
    replacements: int = 0
    pause_deadline: int | None = None  # of the current wait for replacements
    relaxed: int = 0  # timed(L, T): levels moved out from L so far
    # What happens to it.
    state: str = "pending"  # pending, waiting, backoff, starting, running, final
    epoch: int = 0  # bumped whenever the job changes state: older timers are stale
    reservation: Any = None
    held_gpus: int = 0
    held_since: int = 0
    held_ms_gpu: int = 0
    first_admitted: int | None = None
    admitted: int | None = None
    all_ready: int | None = None
    end: int | None = None
    run_ms: int = 0
    run_start: int = 0
    attempts: int = 0
    readiness_failures: int = 0
    level: str | None = None
    slowdown: float | None = None
    final: str | None = None
    entry: int = 0


@dataclass
class Config:
    policy: str = "unconstrained"
    init_time: float = 60.0
    timeout: float | None = 300.0
    backoff_base: float = 60.0
    backoff_factor: float = 2.0
    backoff_max: float = 3600.0
    max_attempts: int = 5
    default_sensitivity: str = "medium"
    horizon: float | None = None
    discipline: str = "fifo"  # or "backfill"
    failures: list[tuple[str, float]] = field(default_factory=list)  # (node, at): scheduled
    repair_time: float = 14400.0
    recovery: str = "restart"  # or "replace"
    replace_timeout: float | None = None


@dataclass(order=True)
class Event:
    t: int
    cls: int
    job: int
    seq: int
    epoch: int = field(compare=False)


class Reference:
    """Runs one simulation; ``records()`` gives per-job dicts with gang-sim's field names."""

    def __init__(self, cluster: dict[str, Any], jobs: list[dict[str, Any]], config: Config) -> None:
        self.cluster = cluster
        self.levels: list[str] = list(cluster["topology"]["levels"])
        self.labels = {n["name"]: n.get("labels", {}) for n in cluster["nodes"]}
        # Each node labelled with its name, so that a request can name nodes to avoid
        # (backfill). Not a topology level: it changes no placement.
        cluster = dict(cluster, nodes=[dict(n, labels={**n.get("labels", {}), HOST: n["name"]})
                                       for n in cluster["nodes"]])
        self.inv = gang.Inventory.from_dict(cluster)
        self.empty = gang.Inventory.from_dict(cluster)
        self.cfg = config
        self.jobs = [self._job(i, j) for i, j in enumerate(jobs)]
        self.heap: list[Event] = []
        self.seq = 0
        self.entries = 0
        self.now = 0
        self.last = 0  # the last time at which an event was handled
        self.backfilled = 0  # admissions behind a waiting head (for the tests' coverage)
        self.down: set[str] = set()

    # ---------------------------------------------------------------- building

    def _level(self, name: str) -> str:
        """A level key from the name a policy uses (a unique last path segment will do)."""
        if name in self.levels:
            return name
        hits = [lv for lv in self.levels if lv.rsplit("/", 1)[-1] == name]
        assert len(hits) == 1, (name, self.levels)
        return hits[0]

    def _job(self, i: int, j: dict[str, Any]) -> Job:
        table = j.get("slowdown") or TABLES[j.get("sensitivity", self.cfg.default_sensitivity)]
        return Job(index=i, id=j["id"], submit=ms(j["submit"]), duration=ms(j["duration"]),
                   members=j["members"], min_members=j.get("min_members"), gpus=j.get("gpus", 0),
                   policy=j.get("policy", self.cfg.policy), table=list(table),
                   priority=j.get("priority", 0),
                   cancel=None if j.get("cancel") is None else ms(j["cancel"]),
                   failing=j.get("failing_members", 0),
                   checkpoint=None if j.get("checkpoint") is None else ms(j["checkpoint"]),
                   remaining=float(ms(j["duration"])),
                   recovery=j.get("recovery", self.cfg.recovery))

    def _timed(self, job: Job) -> tuple[int, int] | None:
        """timed(L, T): (index of L among the levels, T in ms)."""
        p = job.policy.replace(" ", "")
        if not p.startswith("timed("):
            return None
        level, after = p[len("timed("):-1].split(",")
        return self.levels.index(self._level(level)), ms(float(after))

    def _gang(self, job: Job, outside: frozenset[str] = frozenset(), loosest: bool = False) -> gang.Gang:
        """The job's gang; with ``outside``, kept off those nodes (by their names); with
        ``loosest``, as far as timed relaxation can go (unconstrained)."""
        requests = {GPU: job.gpus} if job.gpus else {}
        off = [gang.Requirement(HOST, "NotIn", sorted(outside))] if outside else None
        role = gang.Role("worker", job.members, requests=requests, min_count=job.min_members,
                         match_expressions=off)
        p = job.policy.replace(" ", "")
        timed = self._timed(job)
        if timed is not None:
            # "required at L for up to T s of waiting, then the parent level, ..., then
            # unconstrained"
            at = timed[0] - job.relaxed
            if loosest or at < 0:
                return gang.Gang(job.id, [role])
            return gang.Gang(job.id, [role], required=self.levels[at])
        if p.startswith("required("):
            return gang.Gang(job.id, [role], required=self._level(p[len("required("):-1]))
        if p.startswith("preferred("):
            return gang.Gang(job.id, [role], preferred=self._level(p[len("preferred("):-1]))
        assert p == "unconstrained", p
        return gang.Gang(job.id, [role])

    # ------------------------------------------------------------------ events

    def push(self, t: int, cls: int, job: Job) -> None:
        self.seq += 1
        heapq.heappush(self.heap, Event(t, cls, job.index, self.seq, job.epoch))

    def stale(self, ev: Event) -> bool:
        return self.jobs[ev.job].epoch != ev.epoch

    def move(self, job: Job, state: str) -> None:
        job.state = state
        job.epoch += 1

    def hold(self, job: Job, gpus: int) -> None:
        job.held_gpus, job.held_since = gpus, self.now

    def release(self, job: Job) -> None:
        job.held_ms_gpu += job.held_gpus * (self.now - job.held_since)
        job.held_gpus = 0
        if job.reservation is not None:
            self.inv.release(job.reservation)
            job.reservation = None

    def finish(self, job: Job, state: str) -> None:
        self.move(job, "final")
        job.final, job.end = state, self.now

    def enqueue(self, job: Job) -> None:
        self.move(job, "waiting")
        self.entries += 1
        job.entry = self.entries
        # Each wait starts at L again (the docs are silent about a job that waits again
        # after a readiness timeout or a restart; gang-sim starts it over, and its docs
        # now say so).
        job.relaxed = 0
        self.arm_relax(job)

    def arm_relax(self, job: Job) -> None:
        """A waiting job under timed relaxation moves out one level after T s of waiting
        at its current level."""
        timed = self._timed(job)
        if timed is not None and timed[0] - job.relaxed >= 0:
            self.push(self.now + timed[1], RELAX, job)

    def span(self, nodes: list[str]) -> int:
        """0: one node; k: one domain of the k-th level counted from the innermost;
        len(levels) + 1: the whole cluster."""
        if len(nodes) == 1:
            return 0
        for k in range(len(self.levels), 0, -1):  # innermost first
            paths = {tuple(self.labels[n].get(lv) for lv in self.levels[:k]) for n in nodes}
            if len(paths) == 1 and None not in next(iter(paths)):
                return len(self.levels) - k + 1
        return len(self.levels) + 1

    def place_on(self, job: Job, nodes: list[str]) -> None:
        """Where the job now is, and the slowdown of that span."""
        job.nodes = frozenset(nodes)
        s = self.span(sorted(nodes))
        # "the last value applies to anything wider (and to the whole cluster)"
        whole = s > len(self.levels)
        job.slowdown = job.table[-1] if whole else job.table[min(s, len(job.table) - 1)]
        job.level = "node" if s == 0 else ("cluster" if s > len(self.levels) else self.levels[len(self.levels) - s])

    def held_now(self, job: Job) -> tuple[list[str], int]:
        """The nodes and the member count the job's reservation holds now."""
        r = self.inv.reservation(job.reservation.id)
        return [a.node for a in r.members if a.count > 0], sum(a.count for a in r.members)

    def change_hold(self, job: Job, gpus: int) -> None:
        job.held_ms_gpu += job.held_gpus * (self.now - job.held_since)
        self.hold(job, gpus)

    def admit(self, job: Job, placement: gang.Placement) -> None:
        job.reservation = self.inv.reserve(placement)
        self.place_on(job, list(placement.nodes))
        job.attempts += 1
        job.first_admitted = self.now if job.first_admitted is None else job.first_admitted
        job.admitted = self.now
        self.move(job, "starting")
        self.hold(job, sum(placement.nodes.values()) * job.gpus)
        if job.failing == 0:
            self.push(self.now + ms(self.cfg.init_time), READY, job)
        if self.cfg.timeout is not None:
            self.push(self.now + ms(self.cfg.timeout), TIMEOUT, job)

    def handle(self, ev: Event) -> None:
        job = self.jobs[ev.job]
        if ev.cls == ARRIVE:
            if job.state == "final":
                return
            if self.empty.find(self._gang(job, loosest=True)) is None:
                self.finish(job, "never_fits")
            else:
                self.enqueue(job)
        elif ev.cls == CANCEL:
            if job.state == "final":
                return
            # Cancelled at its submission time: cancel comes before arrive in the class
            # order, so the job never enters the queue (the docs are silent; gang-sim
            # reads it as "cancelled while waiting", and so does this file).
            self.release(job)
            if job.state == "running":
                job.run_ms += self.now - job.run_start
            self.finish(job, "cancelled")
        elif ev.cls == READY:
            # Every member of an attempt, or the replacements of a paused job, ready.
            assert job.state in ("starting", "restarting"), job.state
            job.pause_deadline = None
            self.move(job, "running")
            job.all_ready = self.now if job.all_ready is None else job.all_ready
            job.run_start = self.now
            run = int(math.floor(job.remaining * (job.slowdown or 1.0) + 0.5))
            self.push(self.now + run, FINISH, job)
        elif ev.cls == FINISH:
            job.run_ms += self.now - job.run_start
            self.release(job)
            self.finish(job, "completed")
        elif ev.cls == TIMEOUT and job.state == "paused":
            # "the end of a paused job's replace_timeout: it releases and restarts"
            self.release(job)
            job.restarts += 1
            job.pause_deadline = None
            self.enqueue(job)
        elif ev.cls == TIMEOUT:
            self.release(job)
            job.readiness_failures += 1
            n = job.readiness_failures
            if n >= self.cfg.max_attempts:
                self.finish(job, "failed")
            else:
                self.move(job, "backoff")
                wait = min(self.cfg.backoff_base * self.cfg.backoff_factor ** (n - 1), self.cfg.backoff_max)
                self.push(self.now + ms(wait), REQUEUE, job)
        elif ev.cls == REQUEUE:
            self.enqueue(job)
        elif ev.cls == RELAX:
            job.relaxed += 1
            self.arm_relax(job)
        elif ev.cls == FAIL:
            self.fail(ev.job)
        elif ev.cls == REPAIR:
            node = self.cfg.failures[ev.job][0]
            self.down.discard(node)
            self.inv.uncordon(node)
        else:  # pragma: no cover
            raise AssertionError(ev)

    def fail(self, k: int) -> None:
        """ "A node fails (cordoned, its members lost) ... back after repair_time.
        Starting jobs lose the attempt (requeued at once, not a readiness failure).
        Running jobs keep work up to their last checkpoint (every checkpoint s of the
        segment's running); then restart (release, requeue)." """
        node = self.cfg.failures[k][0]
        if node in self.down:
            return  # "no effect if that node is down"
        self.down.add(node)
        self.inv.fail_node(node)  # cordoned; the reservations on it lose those members
        for job in self.jobs:  # trace order
            if job.state not in ("starting", "running", "paused", "restarting") or node not in job.nodes:
                continue
            job.node_failures += 1
            if job.state == "running":
                seg = self.now - job.run_start
                job.run_ms += seg
                kept = (seg // job.checkpoint) * job.checkpoint if job.checkpoint else 0
                job.remaining -= kept / (job.slowdown or 1.0)
                job.lost_ms += seg - kept
            if job.state in ("running", "paused", "restarting") and job.recovery == "replace":
                # "keep the rest, wait for gang-core replace inside the domain"
                was_paused = job.state == "paused"
                nodes, members = self.held_now(job)
                job.nodes = frozenset(nodes)
                self.change_hold(job, members * job.gpus)
                if not was_paused:
                    self.move(job, "paused")
                    # The wait lasts from the first loss until the job runs again (a
                    # loss while replacements initialise does not start it afresh).
                    if self.cfg.replace_timeout is not None:
                        if job.pause_deadline is None:
                            job.pause_deadline = self.now + ms(self.cfg.replace_timeout)
                        self.push(max(job.pause_deadline, self.now), TIMEOUT, job)
                continue
            if job.state == "running":
                job.restarts += 1
            self.release(job)
            self.enqueue(job)
        self.push_node(self.now + ms(self.cfg.repair_time), REPAIR, k)

    def push_node(self, t: int, cls: int, k: int) -> None:
        self.seq += 1
        heapq.heappush(self.heap, Event(t, cls, k, self.seq, -1))

    def usable_by(self, job: Job) -> frozenset[str]:
        """Nodes where one member of the job fits now."""
        one = Job(**{**job.__dict__, "members": 1, "min_members": None})
        return frozenset(n for n in self.labels
                         if self.inv.find(self._gang(one, frozenset(self.labels) - {n})) is not None)

    def scheduling_pass(self) -> None:
        # 1. "Paused jobs (waiting for replacements), by trace order, try gang-core
        # replace"; inside the domain, or they keep waiting holding the rest.
        for job in self.jobs:
            if job.state != "paused":
                continue
            try:
                self.inv.replace(job.reservation)
            except gang.Pending:
                continue
            job.replacements += 1
            nodes, members = self.held_now(job)
            self.change_hold(job, members * job.gpus)
            self.place_on(job, nodes)
            self.move(job, "restarting")
            self.push(self.now + ms(self.cfg.init_time), READY, job)
        queue = sorted((j for j in self.jobs if j.state == "waiting"), key=lambda j: (-j.priority, j.entry))
        head = False  # a job ahead waits
        kept: list[str] = []  # nodes kept for it (cordoned for the rest of the pass)
        try:
            for job in queue:
                p = self.inv.find(self._gang(job))
                if p is None:
                    if self.cfg.discipline == "fifo":
                        return  # the head: FIFO stops here
                    if not head:
                        # Backfill: later jobs only "on nodes where no role of the head
                        # fits a member now" (found once, for the whole pass). They are
                        # cordoned while the pass lasts rather than written into the
                        # later jobs' gangs: a reservation keeps its gang as asked, and
                        # replacements of lost members may use those nodes later.
                        head = True
                        kept = sorted(self.usable_by(job) - self.down)
                        for n in kept:
                            self.inv.cordon(n)
                    continue
                if head:
                    self.backfilled += 1
                self.admit(job, p)
        finally:
            for n in kept:
                self.inv.uncordon(n)

    # ---------------------------------------------------------------------- run

    def run(self) -> Reference:
        for job in self.jobs:
            self.push(job.submit, ARRIVE, job)
            if job.cancel is not None:
                self.push(job.cancel, CANCEL, job)
        # Arrivals and cancellations are timers of the job's life, not of a state.
        for ev in self.heap:
            ev.epoch = -1
        for k, (_, at) in enumerate(self.cfg.failures):
            self.push_node(ms(at), FAIL, k)
        horizon = None if self.cfg.horizon is None else ms(self.cfg.horizon)
        while self.heap:
            # Stale timers are invisible: drop them before looking at the clock.
            while self.heap and self.heap[0].epoch != -1 and self.stale(self.heap[0]):
                heapq.heappop(self.heap)
            if not self.heap:
                break
            # "only the failure process left": nothing else can happen.
            if all(e.cls == FAIL for e in self.heap if e.epoch == -1 or not self.stale(e)):
                break
            t = self.heap[0].t
            if horizon is not None and t > horizon:
                break
            self.now = t
            while True:
                handled = False
                while self.heap and self.heap[0].t == t:
                    ev = heapq.heappop(self.heap)
                    if ev.epoch != -1 and self.stale(ev):
                        continue
                    self.handle(ev)
                    handled = True
                if not handled:
                    break
                self.last = t
                self.scheduling_pass()  # may push events for this same time
            if all(j.state == "final" for j in self.jobs):
                break
        end = self.last if horizon is None else max(self.last, horizon)
        self.now = end
        for job in self.jobs:
            if job.state != "final":
                if job.state == "running":
                    job.run_ms += self.now - job.run_start
                self.release(job)
                job.final, job.end = "unfinished", end
        return self

    def records(self) -> list[dict[str, Any]]:
        out = []
        for j in self.jobs:
            out.append({
                "id": j.id,
                "policy": j.policy,
                "state": j.final,
                "submit": sec(j.submit),
                "first_admitted": sec(j.first_admitted),
                "admitted": sec(j.admitted),
                "all_ready": sec(j.all_ready),
                "first_progress": sec(j.all_ready),
                "end": sec(j.end),
                "completion": sec(j.end - j.submit) if j.final == "completed" and j.end is not None else None,
                "queue_delay": None if j.first_admitted is None else sec(j.first_admitted - j.submit),
                "time_to_ready": None if j.all_ready is None else sec(j.all_ready - j.submit),
                "run_time": j.run_ms / 1000.0,
                "attempts": j.attempts,
                "readiness_failures": j.readiness_failures,
                "span": j.level,
                "slowdown": j.slowdown,
                "gpu_hours_held": j.held_ms_gpu / 3.6e6,
                "node_failures": j.node_failures,
                "restarts": j.restarts,
                "lost_work_hours": j.lost_ms / 3.6e6,
                "replacements": j.replacements,
            })
        return out


def simulate(cluster: dict[str, Any], jobs: list[dict[str, Any]], config: Config) -> list[dict[str, Any]]:
    """Per-job records of the reference simulation."""
    return Reference(cluster, jobs, config).run().records()
