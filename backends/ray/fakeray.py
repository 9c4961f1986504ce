"""A test stand-in for the few Ray calls sagebench_ray.RayRuntime makes,
so its code runs without Ray (which the build machines cannot install):
ray.remote on a class, .options(max_concurrency=N).remote(*args), actor
methods' .remote(*args) returning refs, ray.wait, ray.get,
ray.cluster_resources and ray.__version__.

An actor is a thread pool of max_concurrency workers whose first task is
its constructor. As Ray does, a call whose arguments are refs waits for
them before it takes a worker (a dependency does not hold a concurrency
slot), and a failed dependency fails the call; an actor with
max_concurrency 1 starts its calls in submission order (Ray's
SequentialActorSubmitQueue: a call whose arguments are not ready holds
back the calls submitted after it); arguments and results are deep
copies (Ray serialises them: a callee's changes to an argument are not
seen by the caller). This is not Ray: the scheduling, placement and
failure handling of a real cluster are not modelled. It is not shipped
with the driver.
"""

import concurrent.futures
import copy
import threading

__version__ = "0.0.0-fakeray"


class ObjectRef:
    def __init__(self, fut):
        self.fut = fut

    def __hash__(self):
        return id(self)


def init(*args, **kwargs):
    pass


def cluster_resources():
    return {"CPU": 2.0, "memory": 1e9}


def remote(*args, **kwargs):
    if args and callable(args[0]):
        return ActorClass(args[0], {})
    return lambda cls: ActorClass(cls, kwargs)


class ActorClass:
    def __init__(self, cls, opts):
        self.cls, self.opts = cls, opts

    def options(self, **kwargs):
        return ActorClass(self.cls, dict(self.opts, **kwargs))

    def remote(self, *args):
        return ActorHandle(self.cls, self.opts.get("max_concurrency", 1), args)


class ActorHandle:
    def __init__(self, cls, concurrency, args):
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency)
        self._obj = self._pool.submit(cls, *copy.deepcopy(args))  # the actor's constructor, before its methods
        self._sequential = concurrency == 1
        self._tail = self._obj  # the last call dispatched (in submission order when sequential)
        self._lock = threading.Lock()

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return Method(self, name)


class Method:
    def __init__(self, handle, name):
        self.handle, self.name = handle, name

    def remote(self, *args):
        out = concurrent.futures.Future()
        deps = [a.fut for a in args if isinstance(a, ObjectRef)]
        h = self.handle
        dispatched = concurrent.futures.Future()
        if h._sequential:  # starts after the call submitted before it started
            with h._lock:
                prev, h._tail = h._tail, dispatched
            deps.append(prev)
        left = [len(deps)]
        lock = threading.Lock()

        def call(real):
            return copy.deepcopy(getattr(h._obj.result(), self.name)(*copy.deepcopy(real)))

        def start(_=None):
            with lock:
                left[0] -= 1 if _ is not None else 0
                if left[0] > 0:
                    return
            try:
                real = [a.fut.result() if isinstance(a, ObjectRef) else a for a in args]
            except Exception as exc:  # a failed dependency fails the call
                dispatched.set_result(None)
                out.set_exception(exc)
                return
            fut = h._pool.submit(call, real)
            dispatched.set_result(None)
            fut.add_done_callback(lambda f: out.set_exception(f.exception()) if f.exception() else out.set_result(f.result()))

        if deps:
            for d in deps:
                d.add_done_callback(start)
        else:
            start()
        return ObjectRef(out)


def wait(refs, num_returns=1, timeout=None):
    by_fut = {r.fut: r for r in refs}
    done, _ = concurrent.futures.wait(list(by_fut), timeout=timeout, return_when=concurrent.futures.FIRST_COMPLETED)
    ready = [by_fut[f] for f in done][:num_returns]
    return ready, [r for r in refs if r not in ready]


def get(refs, timeout=None):
    if isinstance(refs, list):
        return [r.fut.result(timeout) for r in refs]
    return refs.fut.result(timeout)
