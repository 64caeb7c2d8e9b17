"""gang from Python in one page: build a cluster, place a gang, read why one does not fit.

    python examples/python/quickstart.py
"""

import gang

BLOCK, RACK = "topology.example.com/block", "topology.example.com/rack"


def node(name, rack, used_gpus, **kw):
    return gang.Node(
        name,
        labels={BLOCK: "b1", RACK: rack, "nvidia.com/gpu.product": "H200"},
        capacity={"nvidia.com/gpu": 8, "cpu": "96", "memory": "1Ti"},
        used={"nvidia.com/gpu": used_gpus},
        **kw,
    )


# 1. An inventory: nodes with labels, capacity, external use and taints. Validated once.
inventory = gang.Inventory([BLOCK, RACK], [
    node("a1", "a", 6),
    node("a2", "a", 7),
    node("b1", "b", 6, taints=[gang.Taint("dedicated", "training")]),
    node("b2", "b", 8),
])
print(inventory)

# 2. A gang: four 1-GPU workers that must share a rack.
workers = gang.Role(
    "worker", 4,
    requests={"nvidia.com/gpu": 1, "cpu": "500m"},
    node_selector={"nvidia.com/gpu.product": "H200"},
    tolerations=[gang.Toleration.equal("dedicated", "training")],
)
train = gang.Gang("train", [workers], required=RACK)

# 3. Place it. Seven GPUs are free, but no rack has four: Unschedulable, with the why.
try:
    inventory.place(train)
except gang.Unschedulable as e:
    d = e.diagnosis
    print("\nDoes not fit:", e)
    print(f"  best {d.best.level}: {d.best.domain} fits {d.best.fits[0].fits} of {d.best.fits[0].needed}")
    print(f"  relaxing to {d.relaxation.level} would use {d.relaxation.domain}")
    print("  as records:", d.to_records())

# 4. The same gang with the rack only preferred walks up to the block.
placement = inventory.place(gang.Gang("train", [workers], preferred=RACK))
print("\nPlaced:", placement)
print("  level:", placement.level, "domain:", placement.domain)
print("  members per node:", placement.nodes)
print("  members per rack:", placement.domain_counts(RACK))
for record in placement.to_records():
    print("  ", record)
