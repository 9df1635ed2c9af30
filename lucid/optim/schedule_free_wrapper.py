class ScheduleFreeWrapper: pass
