"""The Python part of the static check (static_check.py has the rules in words): one walk over a
file's syntax tree that resolves names through the import aliases, keeps a light dataflow of which
values are tensors, and reports what the whitelist does not allow.

Scopes: the module, class bodies, functions, an nn.Module's constructor (``ctor``: it may build
weights) and ``@triton.jit`` bodies (``triton``: Triton's language, no torch rules). The dataflow is
flow-insensitive per function: a name is a tensor when any binding of it is.
"""

from __future__ import annotations

import ast
import os
from typing import Dict, Iterable, Iterator, List, Optional, Set, Tuple

from .sandbox import ALLOWED_CALLS
from .static_names import (ALLOWED_IMPORTS, ATTR_BUILTINS, COMPUTE_METHODS, CTYPES_LOADERS, DUNDER_ATTR_OK,
                           DUNDER_DEF_OK, DUNDER_NAME_OK, FORBIDDEN_BUILTINS, IMPORTS_TEXT, INTROSPECTION_ATTRS,
                           LAYER_TENSOR_ATTRS, NN_CLASSES, PY_METHOD_NAMES, QUERY_METHODS, REASON_COMPUTE,
                           TENSOR_BUILTINS, TENSOR_PLAIN, TENSOR_VIEW_ATTRS, TORCH_CTOR, finding, is_module,
                           library_rule)


class _Scope:
    """What the walk knows where it is: the kind of code, the tensors, single bindings of names."""

    def __init__(self, name: str, kind: str, parent: Optional["_Scope"], cls: Optional["_ClassInfo"] = None,
                 self_name: Optional[str] = None) -> None:
        self.name = name
        self.kind = kind  # module, class, function, ctor, triton
        self.parent = parent
        self.cls = cls
        self.self_name = self_name
        self.tensors: Set[str] = set()
        self.forward_args: Set[str] = set()
        self.bindings: Dict[str, List[Optional[ast.expr]]] = {}

    def lookup(self, name: str) -> Optional[List[Optional[ast.expr]]]:
        scope: Optional[_Scope] = self
        while scope is not None:
            if name in scope.bindings:
                return scope.bindings[name]
            scope = scope.parent
            while scope is not None and scope.kind == "class":
                scope = scope.parent
        return None


class _ClassInfo:
    def __init__(self, is_nn_module: bool, methods: Set[str]) -> None:
        self.is_nn_module = is_nn_module  # its constructor may build weights
        self.methods = methods
        self.assigned: Set[str] = set()  # every self.<name> the methods bind
        self.tensor_attrs: Set[str] = set()
        self.layer_attrs: Set[str] = set()


def _target_names(target: ast.AST) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from _target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def _bind_pairs(nodes: Iterable[ast.AST]) -> List[Tuple[ast.AST, ast.expr, bool]]:
    """(target, value, single) for every binding among a body's nodes; single is False for unpacking
    and loops."""
    pairs: List[Tuple[ast.AST, ast.expr, bool]] = []
    for node in nodes:
        if isinstance(node, ast.Assign):
            for t in node.targets:
                pairs.append((t, node.value, True))
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            pairs.append((node.target, node.value, True))
        elif isinstance(node, (ast.AugAssign, ast.NamedExpr)):
            pairs.append((node.target, node.value, False))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            pairs.append((node.target, node.iter, False))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            pairs.append((node.optional_vars, node.context_expr, False))
    return pairs


def _src(node: ast.AST, limit: int = 60) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd trees: the message only loses its quote
        return "..."
    return text if len(text) <= limit else text[: limit - 3] + "..."


_OP_TEXT = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
            ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<",
            ast.RShift: ">>", ast.USub: "unary -", ast.UAdd: "unary +", ast.Invert: "~", ast.Eq: "==",
            ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.In: "in",
            ast.NotIn: "not in"}


class FileCheck:
    """Checks one Python file of the folder; ``tables`` maps every module of the folder to its aliases."""

    def __init__(self, folder: str, name: str, tree: ast.Module, modules: Set[str],
                 tables: Dict[str, Dict[str, str]]) -> None:
        self.folder = folder
        self.name = name
        self.tree = tree
        self.modules = modules
        self.tables = tables
        self.aliases = tables[os.path.splitext(name)[0]]
        self.findings: List[dict] = []
        self.bases: Set[int] = set()  # nodes used as the object of getattr/hasattr/setattr
        self.module_classes: Set[str] = set()  # classes of this file that are nn.Modules
        self.triton_kernels: Set[str] = set()  # names of its @triton.jit functions
        self._local_cache: Dict[int, List[ast.AST]] = {}
        self._pair_cache: Dict[int, List[Tuple[ast.AST, ast.expr, bool]]] = {}
        # One pass over the tree: every later walk reads these instead of the tree's fields.
        self.children: Dict[int, List[ast.AST]] = {}
        self.parents: Dict[int, ast.AST] = {}
        self.imports: List[ast.stmt] = []
        self.functions: List[ast.AST] = []
        self.deleted: Set[str] = set()  # names a del statement unbinds somewhere
        self.rebound: Set[str] = set()  # names a function rebinds in an outer scope (global, nonlocal)
        stack: List[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            kids = list(ast.iter_child_nodes(node))
            self.children[id(node)] = kids
            for kid in kids:
                self.parents[id(kid)] = node
            stack.extend(kids)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.imports.append(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.append(node)
            elif isinstance(node, ast.Delete):
                self.deleted.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                self.rebound.update(node.names)

    # -- findings

    def _add(self, node: ast.AST, scope: _Scope, construct: str, action: str, reason: str) -> None:
        line = getattr(node, "lineno", None)
        where = f"{self.name} line {line}" if line else self.name
        self.findings.append(finding(self.folder, self.name, line, construct,
                                     f"{where}: {scope.name} {action}: {reason}"))

    # -- imports and names

    def read_imports(self) -> None:
        """Fills this module's alias table and reports refused imports (with the module scope)."""
        scope = _Scope("the module", "module", None)
        for node in self.imports:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    mod = alias.name
                    if mod in ALLOWED_IMPORTS or mod.startswith("triton.language.") or mod in self.modules:
                        if alias.asname:
                            self.aliases[alias.asname] = "@" + mod if mod in self.modules else mod
                        else:
                            top = mod.split(".")[0]
                            self.aliases[top] = "@" + top if mod in self.modules else top
                    else:
                        self._add(node, scope, mod, f"imports {mod}", IMPORTS_TEXT)
            elif isinstance(node, ast.ImportFrom):
                self._read_from(node, scope)

    def _read_from(self, node: ast.ImportFrom, scope: _Scope) -> None:
        mod = node.module or ""
        if node.level:
            self._add(node, scope, "relative import", f"imports {'.' * node.level}{mod}",
                      "relative imports are refused: import a file beside the kernel by its name (import helpers)")
            return
        if mod == "__future__":
            return
        sibling = mod in self.modules
        if not (sibling or mod in ALLOWED_IMPORTS or mod.startswith("triton.language.")):
            self._add(node, scope, mod, f"imports from {mod}", IMPORTS_TEXT)
            return
        for alias in node.names:
            if alias.name == "*":
                if mod not in ("math", "typing"):
                    self._add(node, scope, f"from {mod} import *", f"imports * from {mod}",
                              "star imports hide what is used: import the names you use")
                continue
            bound = alias.asname or alias.name
            if sibling:
                self.aliases[bound] = f"@{mod}.{alias.name}"
                continue
            qual = f"{mod}.{alias.name}"
            self.aliases[bound] = qual
            reason = None if is_module(qual) else library_rule(qual, "any", called=True)
            if reason is not None:
                self._add(node, scope, qual, f"imports {qual}", reason)

    def resolve(self, qual: Optional[str]) -> Optional[str]:
        """A sibling's name that is itself an alias there resolves to what it names."""
        for _ in range(16):
            if qual is None or not qual.startswith("@") or "." not in qual:
                return qual
            mod, rest = qual[1:].split(".", 1)
            head, _, tail = rest.partition(".")
            target = self.tables.get(mod, {}).get(head)
            if target is None:
                return qual
            qual = target + ("." + tail if tail else "")
        return qual

    def qual(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Name):
            return self.resolve(self.aliases.get(node.id))
        if isinstance(node, ast.Attribute):
            base = self.qual(node.value)
            return self.resolve(f"{base}.{node.attr}") if base else None
        return None

    # -- the walk

    def run(self) -> None:
        self.triton_kernels = {getattr(f, "name") for f in self.functions if self._is_triton_kernel(f)}
        scope = _Scope("the module", "module", None)
        self._bindings(scope, self.tree.body)
        scope.tensors = self._flow(scope, self.tree.body, set())
        try:
            self._body(self.tree.body, scope)
        except RecursionError:
            self.findings.append(finding(self.folder, self.name, None, "nesting",
                                         f"{self.name}: the file nests code too deeply to be checked; "
                                         "split its expressions"))

    def _locals(self, body: List[ast.stmt]) -> List[ast.AST]:
        key = id(body)
        if key not in self._local_cache:
            out: List[ast.AST] = []
            stack: List[ast.AST] = list(body)
            while stack:  # not entering nested functions, lambdas and classes
                node = stack.pop()
                out.append(node)
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                    stack.extend(self.children[id(node)])
            self._local_cache[key] = out
        return self._local_cache[key]

    def _pairs(self, body: List[ast.stmt]) -> List[Tuple[ast.AST, ast.expr, bool]]:
        key = id(body)
        if key not in self._pair_cache:
            self._pair_cache[key] = _bind_pairs(self._locals(body))
        return self._pair_cache[key]

    def _bindings(self, scope: _Scope, body: List[ast.stmt]) -> None:
        """Every name the body binds; the bound value where it is one plain assignment, else None."""
        for node in self._locals(body):
            names: List[str] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [(a.asname or a.name).split(".")[0] for a in node.names]
            elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
                names = [node.name]
            elif isinstance(node, ast.MatchMapping) and node.rest:
                names = [node.rest]
            for name in names:
                scope.bindings.setdefault(name, []).append(None)
        for target, value, single in self._pairs(body):
            for name in _target_names(target):
                scope.bindings.setdefault(name, []).append(
                    value if single and isinstance(target, ast.Name) else None)

    def _body(self, nodes: Iterable[ast.AST], scope: _Scope) -> None:
        for node in nodes:
            self._visit(node, scope)

    def _visit(self, node: ast.AST, scope: _Scope) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._function(node, scope)
            return
        if isinstance(node, ast.ClassDef):
            self._class(node, scope)
            return
        if isinstance(node, ast.Lambda):
            inner = _Scope(scope.name, "triton" if scope.kind == "triton" else "function", scope, scope.cls,
                           scope.self_name)
            inner.tensors = set(scope.tensors)
            args = node.args
            for arg in args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]:
                inner.bindings.setdefault(arg.arg, []).append(None)
            self._body(self.children[id(node)], inner)
            return
        if isinstance(node, ast.Name):
            self._name(node, scope)
        elif isinstance(node, ast.Attribute):
            self._attribute(node, scope)
        elif isinstance(node, ast.Call):
            self._call(node, scope)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            self._store(node, scope)
        if scope.kind not in ("ctor", "triton"):
            self._operators(node, scope)
        for child in self.children[id(node)]:
            self._visit(child, scope)

    def _function(self, node: ast.AST, scope: _Scope) -> None:
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for deco in node.decorator_list:
            self._visit(deco, scope)
        self._body(self.children[id(node.args)], scope)
        if node.returns is not None:
            self._visit(node.returns, scope)
        in_class = scope.kind == "class"
        name = f"{scope.name}.{node.name}" if in_class else node.name
        if node.name.startswith("__") and node.name.endswith("__") and node.name not in DUNDER_DEF_OK:
            self._add(node, scope, node.name, f"defines {node.name}",
                      "special methods that hook into torch or the interpreter are refused; define ordinary "
                      "methods")
        params = node.args.posonlyargs + node.args.args
        if self._is_triton_kernel(node) or scope.kind == "triton":
            kind = "triton"
        elif in_class and node.name == "__init__" and scope.cls is not None and scope.cls.is_nn_module:
            kind = "ctor"
        else:
            kind = "function"
        self_name = params[0].arg if in_class and params else scope.self_name
        inner = _Scope(name, kind, scope, scope.cls, self_name)
        initial = set(scope.tensors)
        if in_class and node.name == "forward":
            inner.forward_args = self._forward_tensors(node)
            initial |= inner.forward_args
        self._bindings(inner, node.body)
        for arg in params + node.args.kwonlyargs + [a for a in (node.args.vararg, node.args.kwarg) if a]:
            inner.bindings.setdefault(arg.arg, []).append(None)
        inner.tensors = self._flow(inner, node.body, initial)
        self._body(node.body, inner)

    @staticmethod
    def _forward_tensors(node: ast.AST) -> Set[str]:
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        args = node.args
        positional = (args.posonlyargs + args.args)[1:]
        defaults: Dict[str, Optional[ast.expr]] = {}
        for arg, default in zip(reversed(args.posonlyargs + args.args), reversed(args.defaults)):
            defaults[arg.arg] = default
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            defaults[arg.arg] = default
        out: Set[str] = set()
        for arg in positional + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]:
            default = defaults.get(arg.arg)
            if isinstance(default, ast.Constant) and default.value is not None:
                continue
            if isinstance(arg.annotation, ast.Name) and arg.annotation.id in ("int", "float", "bool", "str"):
                continue
            out.add(arg.arg)
        return out

    def _is_triton_kernel(self, node: ast.AST) -> bool:
        decos = getattr(node, "decorator_list", [])
        if not decos:
            return False
        quals = [self.qual(d.func if isinstance(d, ast.Call) else d) for d in decos]
        return quals[-1] == "triton.jit" and all(q in ("triton.autotune", "triton.heuristics") for q in quals[:-1])

    def _class(self, node: ast.ClassDef, scope: _Scope) -> None:
        for child in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self._visit(child, scope)
        methods = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
        bases = [self.qual(b) for b in node.bases]
        nn_module = any(q is not None and q.startswith("torch.nn.") and q.count(".") == 2
                        and q.split(".")[2] in NN_CLASSES for q in bases) or any(
            isinstance(b, ast.Name) and b.id in self.module_classes for b in node.bases)
        if nn_module:
            self.module_classes.add(node.name)
        info = _ClassInfo(nn_module, {m.name for m in methods})
        inner = _Scope(node.name if scope.kind == "module" else f"{scope.name}.{node.name}", "class", scope, info)
        self._bindings(inner, node.body)
        for _ in range(2):  # attributes bound from other attributes settle in two rounds
            for method in methods:
                self._class_attrs(method, info, scope)
        inner.tensors = set(scope.tensors)
        self._body(node.body, inner)

    def _class_attrs(self, method: ast.AST, info: _ClassInfo, outer: _Scope) -> None:
        assert isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
        params = method.args.posonlyargs + method.args.args
        if not params:
            return
        me = params[0].arg
        kind = "ctor" if method.name == "__init__" and info.is_nn_module else "function"
        scope = _Scope(method.name, kind, outer, info, me)
        initial = self._forward_tensors(method) if method.name == "forward" else set()
        scope.tensors = self._flow(scope, method.body, initial)
        for target, value, _single in self._pairs(method.body):
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me:
                info.assigned.add(target.attr)
                if self._is_layer_call(value):
                    info.layer_attrs.add(target.attr)
                elif self._is_tensor(value, scope):
                    info.tensor_attrs.add(target.attr)
        for node in self._locals(method.body):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("register_buffer", "register_parameter") and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                info.tensor_attrs.add(node.args[0].value)

    def _is_layer_call(self, value: ast.expr) -> bool:
        if not isinstance(value, ast.Call):
            return False
        qual = self.qual(value.func)
        return (qual is not None and qual.startswith("torch.nn.") and qual.count(".") == 2
                and qual.split(".")[2] in NN_CLASSES and qual != "torch.nn.Parameter")

    # -- tensors

    def _flow(self, scope: _Scope, body: List[ast.stmt], initial: Set[str]) -> Set[str]:
        pairs = self._pairs(body)
        scope.tensors = set(initial)
        for _ in range(8):
            changed = False
            for target, value, _single in pairs:
                if self._is_tensor(value, scope):
                    for name in _target_names(target):
                        if name not in scope.tensors:
                            scope.tensors.add(name)
                            changed = True
            if not changed:
                break
        return scope.tensors

    def _is_self_attr(self, node: ast.AST, scope: _Scope, attrs: Optional[Set[str]]) -> bool:
        return (attrs is not None and isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id == scope.self_name and node.attr in attrs)

    def _is_tensor(self, node: ast.AST, scope: _Scope) -> bool:
        info = scope.cls
        if isinstance(node, ast.Name):
            return node.id in scope.tensors
        if isinstance(node, ast.Attribute):
            if self._is_self_attr(node, scope, info.tensor_attrs if info else None):
                return True
            if node.attr in TENSOR_VIEW_ATTRS and self._is_tensor(node.value, scope):
                return True
            return node.attr in LAYER_TENSOR_ATTRS and self._is_self_attr(
                node.value, scope, info.layer_attrs if info else None)
        if isinstance(node, ast.Subscript):
            return self._is_tensor(node.value, scope)
        if isinstance(node, ast.Call):
            func = node.func
            if self._is_layer_ref(func, scope):
                return True
            qual = self.qual(func)
            if qual is not None:
                parts = qual.split(".")
                if qual == "torch.nn.Parameter":
                    return True
                return (len(parts) == 2 and parts[0] == "torch" and parts[1] not in QUERY_METHODS
                        and (parts[1] in ALLOWED_CALLS or parts[1] in TORCH_CTOR)
                        and parts[1] not in ("is_tensor", "manual_seed"))
            if isinstance(func, ast.Attribute):
                if func.attr == "type" and not node.args and not node.keywords:
                    return False
                return func.attr not in QUERY_METHODS and func.attr not in TENSOR_PLAIN and \
                    self._is_tensor(func.value, scope)
            return False
        if isinstance(node, ast.BinOp):
            return self._is_tensor(node.left, scope) or self._is_tensor(node.right, scope)
        if isinstance(node, ast.UnaryOp):
            return not isinstance(node.op, ast.Not) and self._is_tensor(node.operand, scope)
        if isinstance(node, ast.IfExp):
            return self._is_tensor(node.body, scope) or self._is_tensor(node.orelse, scope)
        if isinstance(node, (ast.NamedExpr, ast.Starred)):
            return self._is_tensor(node.value, scope)
        return False

    def _is_layer_ref(self, func: ast.AST, scope: _Scope) -> bool:
        """``self.layer``, ``self.layer[i]`` or ``self.layer.forward`` where the constructor built a layer."""
        layers = scope.cls.layer_attrs if scope.cls else None
        if isinstance(func, ast.Subscript):
            func = func.value
        if isinstance(func, ast.Attribute) and func.attr in ("forward", "__call__"):
            func = func.value.value if isinstance(func.value, ast.Subscript) else func.value
        return self._is_self_attr(func, scope, layers)

    # -- the rules

    def _parent(self, node: ast.AST) -> Optional[ast.AST]:
        return self.parents.get(id(node))

    def _is_called(self, node: ast.AST) -> bool:
        parent = self._parent(node)
        return isinstance(parent, ast.Call) and parent.func is node

    def _is_attr_base(self, node: ast.AST) -> bool:
        parent = self._parent(node)
        return (isinstance(parent, ast.Attribute) and parent.value is node) or id(node) in self.bases

    def _builtin(self, name: str, scope: _Scope) -> bool:
        """True when ``name`` here is Python's builtin: not bound by the file, or deleted somewhere (a
        module-level ``del`` brings the builtin back)."""
        return name in self.deleted or (name not in self.aliases and scope.lookup(name) is None)

    def _name(self, node: ast.Name, scope: _Scope) -> None:
        name = node.id
        if name in FORBIDDEN_BUILTINS and self._builtin(name, scope):
            self._add(node, scope, name, f"uses {name}", FORBIDDEN_BUILTINS[name])
            return
        if name.startswith("__") and name.endswith("__") and name not in DUNDER_NAME_OK:
            self._add(node, scope, name, f"uses {name}",
                      "special names other than __file__ and __name__ reach the interpreter's internals; "
                      "use ordinary names")
            return
        if name in ATTR_BUILTINS and not self._is_called(node) and self._builtin(name, scope):
            self._add(node, scope, name, f"uses {name} as a value",
                      f"{name} may only be called directly, with a literal attribute name")
            return
        if isinstance(node.ctx, ast.Load):
            self._library_use(node, scope)

    def _attribute(self, node: ast.Attribute, scope: _Scope) -> None:
        base_qual = self.qual(node.value)
        if base_qual is not None and is_module(base_qual) and not (
                node.attr.startswith("__") and node.attr not in DUNDER_ATTR_OK):
            if isinstance(node.ctx, ast.Load):
                self._library_use(node, scope)
            return
        self._attr_name(node, node.attr, node.value, scope, self._is_called(node), base_qual)

    def _library_use(self, node: ast.AST, scope: _Scope) -> None:
        """A Name or Attribute that names a library object (or a module)."""
        qual = self.qual(node)
        if qual is None or (qual.startswith("@") and "." in qual):
            return
        if is_module(qual):
            if not self._is_attr_base(node):
                if qual == "os.environ":
                    self._add(node, scope, qual, "reads os.environ directly", "use os.environ.get(name)")
                else:
                    self._add(node, scope, qual.lstrip("@"), f"uses the module {_src(node)} as a value",
                              "a module may be used only through its attributes (torch.empty(...)), so that "
                              "the check sees which ones")
            return
        called = self._is_called(node)
        reason = library_rule(qual, scope.kind, called=called)
        if reason is not None:
            top = node
            while isinstance(self._parent(top), ast.Attribute) and getattr(self._parent(top), "value") is top:
                top = self._parent(top)  # type: ignore[assignment]
            shown = self.qual(top) or qual
            self._add(node, scope, shown, f"{'calls' if self._is_called(top) else 'uses'} {shown}", reason)
        elif qual in CTYPES_LOADERS and not called:
            self._add(node, scope, qual, f"uses {qual} other than by calling it",
                      "a kernel may load only its own library, by calling ctypes.CDLL(path) directly")

    def _attr_name(self, node: ast.AST, attr: str, receiver: ast.AST, scope: _Scope, called: bool,
                   receiver_qual: Optional[str], via_getattr: bool = False) -> None:
        """The rules for an attribute of an object (not of a module)."""
        shown = f"{_src(receiver, 40)}.{attr}"
        if attr.startswith("__") and attr.endswith("__") and attr not in DUNDER_ATTR_OK:
            self._add(node, scope, attr, f"uses the special attribute {shown}",
                      "special attributes other than __file__, __init__ and __name__ reach the interpreter's "
                      "internals and are refused; use the object's ordinary interface")
            return
        if attr in INTROSPECTION_ATTRS:
            self._add(node, scope, attr, f"uses {shown}",
                      "frames, code objects and raw addresses are refused; use the object's ordinary interface")
            return
        library = receiver_qual is not None and not receiver_qual.startswith("@")
        if receiver_qual == "torch.Tensor" and attr not in ALLOWED_CALLS and attr not in TENSOR_PLAIN:
            self._add(node, scope, f"Tensor.{attr}", f"uses torch.Tensor.{attr}", REASON_COMPUTE)
            return
        if isinstance(receiver, ast.Name) and receiver.id in self.triton_kernels and attr in ("fn", "base_fn"):
            self._add(node, scope, f"{receiver.id}.{attr}", f"uses {shown}",
                      "the Python function behind a Triton kernel would run its arithmetic in torch; launch the "
                      "kernel as kernel[grid](...)")
            return
        if scope.kind in ("ctor", "triton") or attr not in COMPUTE_METHODS or library:
            return
        info = scope.cls
        if (isinstance(receiver, ast.Name) and receiver.id == scope.self_name and info is not None
                and (info.is_nn_module or attr in info.methods or attr in info.assigned)
                and attr not in info.tensor_attrs):
            return  # the object's own method or attribute: an nn.Module, or not a tensor's
        tensor = self._is_tensor(receiver, scope)
        if called or via_getattr or tensor:
            if attr in PY_METHOD_NAMES and not tensor:
                return
            what = "calls" if called else "uses"
            reason = REASON_COMPUTE
            if attr == "tolist":
                reason = "computing on a tensor's values as Python lists is refused; " + REASON_COMPUTE
            self._add(node, scope, f"Tensor.{attr}", f"{what} the tensor method {shown}"
                      + ("()" if called else ""), reason)

    def _call(self, node: ast.Call, scope: _Scope) -> None:
        func = node.func
        qual = self.qual(func)
        if qual in CTYPES_LOADERS:
            self._loader(node, qual, scope)
        if isinstance(func, ast.Name) and self._builtin(func.id, scope):
            if func.id in ATTR_BUILTINS or func.id == "hasattr":
                self._attr_builtin(node, func.id, scope)
            elif func.id == "type" and len(node.args) == 1:
                self._type_use(node, scope)
            elif (func.id in TENSOR_BUILTINS and scope.kind not in ("ctor", "triton")
                  and any(self._is_tensor(a, scope) for a in node.args)):
                self._add(node, scope, func.id, f"calls {func.id}() on a tensor ({_src(node)})", REASON_COMPUTE)
        if (scope.kind not in ("ctor", "module", "class") and isinstance(func, ast.Name)
                and func.id in self.module_classes):
            self._add(node, scope, func.id, f"builds the module {func.id} ({_src(node)})",
                      "a module's constructor may compute its weights with torch, so a module of the kernel is "
                      "built in a constructor (the harness builds ModelNew), never while forward runs")
        if scope.kind != "ctor" and self._is_layer_ref(func, scope):
            self._add(node, scope, _src(func, 40), f"calls the torch layer {_src(func, 40)}",
                      "a layer the constructor builds only holds weights; " + REASON_COMPUTE)

    def _attr_builtin(self, node: ast.Call, name: str, scope: _Scope) -> None:
        """getattr with a literal name is the attribute access it spells; setattr and delattr may not
        touch modules; hasattr is a plain query."""
        if not node.args:
            return
        obj = node.args[0]
        self.bases.add(id(obj))
        obj_qual = self.qual(obj)
        second = node.args[1] if len(node.args) > 1 else None
        literal = second.value if isinstance(second, ast.Constant) and isinstance(second.value, str) else None
        if name == "hasattr":
            return
        if name != "getattr":
            if obj_qual is not None:
                self._add(node, scope, name, f"calls {name} on the module {_src(obj)}",
                          "changing a library or another module is refused; keep your own values in your own names")
            elif literal is not None and literal.startswith("__") and literal.endswith("__"):
                self._add(node, scope, literal, f"calls {name} on {literal}",
                          "special attributes reach the interpreter's internals and are refused")
            return
        if literal is None:
            self._add(node, scope, name, "calls getattr with a computed attribute name",
                      "the check must see every attribute a kernel uses; write obj.name or getattr(obj, \"name\")")
            return
        called = self._is_called(node)
        if obj_qual is not None and is_module(obj_qual):
            if obj_qual.startswith("@"):
                return
            qual = f"{obj_qual}.{literal}"
            if is_module(qual):
                self._add(node, scope, qual, f"uses the module {qual} as a value",
                          "a module may be used only through its attributes, so that the check sees which ones")
                return
            reason = library_rule(qual, scope.kind, called=called)
            if reason is not None:
                self._add(node, scope, qual, f"{'calls' if called else 'uses'} {qual}", reason)
            elif qual in CTYPES_LOADERS:
                self._add(node, scope, qual, f"uses {qual} through getattr",
                          "a kernel may load only its own library, by calling ctypes.CDLL(path) directly")
            return
        self._attr_name(node, literal, obj, scope, called, obj_qual, via_getattr=True)

    def _type_use(self, node: ast.Call, scope: _Scope) -> None:
        parent = self._parent(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            if parent.attr in ("__name__", "__qualname__"):
                return
        elif isinstance(parent, ast.Compare):
            return
        elif isinstance(parent, (ast.FormattedValue, ast.Tuple)) or (
                isinstance(parent, ast.Call) and parent.func is not node and isinstance(parent.func, ast.Name)
                and parent.func.id in ("str", "repr", "print", "isinstance", "issubclass", "format", "id", "hash")):
            return
        self._add(node, scope, "type", f"uses the class of an object ({_src(node)})",
                  "type(x) may only be compared or give its __name__: a library object's class reaches what the "
                  "object was built with (ctypes.CDLL, torch.Tensor)")

    def _store(self, node: ast.AST, scope: _Scope) -> None:
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = list(node.targets)
        else:
            targets = [getattr(node, "target")]
        flat: List[ast.AST] = []
        while targets:
            target = targets.pop()
            if isinstance(target, (ast.Tuple, ast.List)):
                targets.extend(target.elts)
            elif isinstance(target, ast.Starred):
                targets.append(target.value)
            else:
                flat.append(target)
        for t in flat:
            if isinstance(t, (ast.Attribute, ast.Subscript)):
                qual = self.qual(t.value)
                if qual is not None:
                    shown = (self.qual(t) or qual).lstrip("@")
                    self._add(t, scope, shown, f"assigns to {_src(t)}, part of {qual.lstrip('@')}",
                              "changing a library or another module is refused; keep your own values in your "
                              "own names")

    def _operators(self, node: ast.AST, scope: _Scope) -> None:
        if isinstance(node, ast.BinOp):
            operands = [node.left, node.right]
            op = _OP_TEXT.get(type(node.op), "an operator")
        elif isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
            operands = [node.operand]
            op = _OP_TEXT.get(type(node.op), "an operator")
        elif isinstance(node, ast.Compare):
            ops = [o for o in node.ops if not isinstance(o, (ast.Is, ast.IsNot))]
            if not ops:
                return
            operands = [node.left] + node.comparators
            op = _OP_TEXT.get(type(ops[0]), "a comparison")
        elif isinstance(node, ast.AugAssign):
            operands = [node.target, node.value]
            op = _OP_TEXT.get(type(node.op), "an operator") + "="
        else:
            return
        flagged = (ast.BinOp, ast.UnaryOp, ast.Compare)
        tensors = [o for o in operands if self._is_tensor(o, scope) and not isinstance(o, flagged)]
        if tensors:
            hint = ""
            args = [o.id for o in tensors if isinstance(o, ast.Name) and o.id in scope.forward_args]
            if args:
                hint = f" (if {args[0]} is a number, not a tensor, say so: {args[0]}: float)"
            self._add(node, scope, op, f"applies {op} to a tensor ({_src(node)})",
                      "tensor operators compute in torch; " + REASON_COMPUTE + hint)

    # -- ctypes loading

    def _loader(self, node: ast.Call, qual: str, scope: _Scope) -> None:
        shown = qual
        bad_kw = [k.arg for k in node.keywords if k.arg not in ("name", "mode", "use_errno", "use_last_error")]
        path_args = node.args[:1] + [k.value for k in node.keywords if k.arg == "name"]
        if bad_kw or len(node.args) > 2 or len(path_args) != 1:
            self._add(node, scope, shown, f"calls {shown} with unusual arguments ({_src(node)})",
                      "load the kernel's own library as ctypes.CDLL(path) (mode= may be given)")
            return
        arg = path_args[0]
        if isinstance(arg, ast.Constant) and arg.value is None:
            self._add(node, scope, shown, f"calls {shown}(None)",
                      "that gives the symbols of the running process, torch's among them; load only the "
                      "kernel's own library, by a path built from __file__")
            return
        rel = self._own_path(arg, scope, 0)
        if rel is None:
            self._add(node, scope, shown, f"loads a library from {_src(arg)}",
                      "a kernel may load only a library of its own folder, named as os.path.join(os.path."
                      "dirname(os.path.abspath(__file__)), \"kernel.so\")")
        elif not os.path.isfile(os.path.join(self.folder, rel)) or os.path.islink(os.path.join(self.folder, rel)):
            self._add(node, scope, shown, f"loads {rel}",
                      f"{rel} is not a file of the kernel's folder (links are not); a kernel may load only its "
                      "own library")

    def _own_path(self, node: ast.AST, scope: _Scope, depth: int, want: str = "in") -> Optional[str]:
        """The folder-relative name when ``node`` is a path into the kernel's folder ('in'), or "" when
        it is the folder ('dir') or the file itself ('file')."""
        if depth > 8:
            return None
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return "" if want == "file" else None
            values = scope.lookup(node.id)
            if values is None or len(values) != 1 or values[0] is None or node.id in self.rebound:
                return None
            return self._own_path(values[0], scope, depth + 1, want)
        if isinstance(node, ast.Call) and not node.keywords:
            qual = self.qual(node.func)
            args = node.args
            if qual in ("os.path.abspath", "os.path.realpath", "os.path.normpath") and len(args) == 1:
                return self._own_path(args[0], scope, depth + 1, want)
            if qual == "os.path.dirname" and len(args) == 1 and want == "dir":
                return self._own_path(args[0], scope, depth + 1, "file")
            if qual == "os.path.join" and len(args) >= 2 and want == "in":
                if self._own_path(args[0], scope, depth + 1, "dir") is None:
                    return None
                parts = [a.value for a in args[1:] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                return _relative(parts) if len(parts) == len(args) - 1 else None
        if want == "in" and isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            right = node.right
            if (isinstance(right, ast.Constant) and isinstance(right.value, str) and right.value.startswith("/")
                    and self._own_path(node.left, scope, depth + 1, "dir") is not None):
                return _relative([right.value[1:]])
        if want == "in" and isinstance(node, ast.JoinedStr) and len(node.values) == 2:
            head, tail = node.values
            if (isinstance(head, ast.FormattedValue) and head.conversion == -1 and head.format_spec is None
                    and isinstance(tail, ast.Constant) and isinstance(tail.value, str)
                    and tail.value.startswith("/")
                    and self._own_path(head.value, scope, depth + 1, "dir") is not None):
                return _relative([tail.value[1:]])
        return None


def _relative(parts: List[str]) -> Optional[str]:
    pieces: List[str] = []
    for part in parts:
        if not part or part.startswith("/") or "\x00" in part:
            return None
        pieces.extend(p for p in part.split("/") if p not in ("", "."))
    if not pieces or ".." in pieces:
        return None
    return "/".join(pieces)


# ---------------------------------------------------------------------------------------------
