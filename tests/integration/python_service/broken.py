"""A module that cannot be imported: rapidrpcd --python must stop and say why."""

import no_such_module_here  # noqa: F401
