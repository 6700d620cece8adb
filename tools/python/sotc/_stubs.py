"""Stand-in modules for tensor frameworks that are not installed.

Tracing must work on a machine without paddle or torch: the tracer records module references
by name, so a user file's `import paddle` only needs *something* to bind. When a framework in
STUBBED_FRAMEWORKS cannot be imported, a stub module is created whose attributes are stubs too;
the encoder records a stub by its dotted name (`paddle.nn.functional`, `paddle.add`).
"""

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

STUBBED_FRAMEWORKS = ("paddle", "torch", "jax", "tensorflow", "triton")


class StubModule(types.ModuleType):
    """A module (or attribute of one) of a framework that is not installed."""

    def __init__(self, name, imported):
        super().__init__(name)
        # True when created by an import statement, False when reached as an attribute.
        self.__sotc_imported__ = imported

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        child = StubModule(f"{self.__name__}.{attr}", imported=False)
        setattr(self, attr, child)
        return child

    def __call__(self, *args, **kwargs):
        # Module-level code such as `paddle.set_device("gpu")` must not fail at import time.
        return StubModule(f"{self.__name__}()", imported=False)

    def __repr__(self):
        return f"<sotc stub {self.__name__}>"


def is_stub(obj):
    return isinstance(obj, StubModule)


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        return StubModule(spec.name, imported=True)

    def exec_module(self, module):
        module.__path__ = []  # a package, so submodule imports resolve through the finder


class _StubFinder(importlib.abc.MetaPathFinder):
    """Placed last on sys.meta_path: only names no real finder resolved reach it."""

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] not in STUBBED_FRAMEWORKS:
            return None
        return importlib.machinery.ModuleSpec(fullname, _StubLoader(), is_package=True)


class stub_missing_frameworks:
    """Context manager that lets imports of missing frameworks succeed with stubs."""

    def __enter__(self):
        self._finder = _StubFinder()
        sys.meta_path.append(self._finder)
        return self

    def __exit__(self, *exc):
        sys.meta_path.remove(self._finder)
        return False
