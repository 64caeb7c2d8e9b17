"""Plots and the HTML report of gang.sim (matplotlib, imported only when used).

Private: use ``gang.sim.plot_*`` and ``gang.sim.report``.
"""
