"""cu.fft.config: the cuFFT plan caches, one per GPU, after CuPy's cupy.fft.config.get_plan_cache():
least recently used plans go first once a cache holds more than `size` plans or more than `memsize`
bytes of workspace (-1: no bound). The CPU keeps no plans (NumPy's pocketfft caches its own)."""

from .. import _cupric as _c

__all__ = ["PlanCache", "get_plan_cache", "show_plan_cache_info"]


def _index(device):
    if device is None:
        return 0
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    d = device if isinstance(device, _c.Device) else _c.Device(str(device))
    if d.type != "cuda":
        raise ValueError(f"plan caches belong to GPUs, got {d}")
    return d.index


class PlanCache:
    """The plan cache of one GPU (cuda:N). Reading it loads nothing."""

    def __init__(self, device=None):
        self.device = _index(device)

    def info(self):
        """dict: size, max_size, memsize, max_memsize, hits, misses and plans (description,
        workspace bytes), most recently used first."""
        return _c._fft_plan_cache_info(self.device)

    def get_size(self):
        return self.info()["max_size"]

    def set_size(self, size):
        """At most `size` plans (0: none kept; -1: no bound); evicts now if needed."""
        _c._fft_set_plan_cache_limits(self.device, _bound(size, "size"), self.get_memsize())

    def get_memsize(self):
        return self.info()["max_memsize"]

    def set_memsize(self, memsize):
        """At most `memsize` bytes of workspace over the cached plans (-1: no bound)."""
        _c._fft_set_plan_cache_limits(self.device, self.get_size(), _bound(memsize, "memsize"))

    def get_curr_size(self):
        return self.info()["size"]

    def get_curr_memsize(self):
        return self.info()["memsize"]

    def clear(self):
        _c._fft_clear_plan_cache(self.device)

    def show_info(self):
        print(self)

    def __len__(self):
        return self.get_curr_size()

    def __repr__(self):
        i = self.info()
        lines = [f"cuFFT plan cache of cuda:{i['device']}: {i['size']} / {_limit(i['max_size'])} plans, "
                 f"{i['memsize']} / {_limit(i['max_memsize'])} bytes of workspace, {i['hits']} hits, "
                 f"{i['misses']} misses"]
        lines += [f"  {description} (workspace {nbytes} bytes)" for description, nbytes in i["plans"]]
        return "\n".join(lines)


def _bound(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int (-1 for no bound), got {type(value).__name__}")
    if value < -1:
        raise ValueError(f"{name} must be -1 (no bound) or at least 0, got {value}")
    return value


def _limit(value):
    return "unbounded" if value < 0 else str(value)


def get_plan_cache(device=None):
    """The plan cache of a GPU (an index, "cuda:N" or a Device; cuda:0 by default)."""
    return PlanCache(device)


def show_plan_cache_info():
    """Prints the plan cache of every GPU that has made a plan."""
    index = 0
    while True:
        cache = PlanCache(index)
        if index > 0 and cache.info()["misses"] == 0:
            break
        print(cache)
        index += 1
        if index >= 64:
            break
