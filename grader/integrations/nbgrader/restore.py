"""nbgrader's ``OverwriteCells`` without its false alarm on every honest student.

``nbgrader generate_assignment`` stores a grade cell's checksum *before* it removes the cell's
hidden tests from the student version (jupyter/nbgrader#1961). At ``nbgrader autograde`` every
hidden-test cell therefore "has changed", and nbgrader warns once per cell per student (dozens
of warnings for a class of honest students) while it restores the cell, as it must, to run the
hidden tests. This preprocessor restores exactly as nbgrader does; it only stays quiet when the
student's cell is the released one, that is the stored source with its hidden tests removed by
nbgrader's own ``ClearHiddenTests``. A cell the student did change is still reported.

``normlab release`` puts it in place of ``OverwriteCells`` in the course's nbgrader config.
"""

from __future__ import annotations

import copy
from typing import Any

from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells


class RestoreHiddenTests(OverwriteCells):  # type: ignore[misc]
    """``OverwriteCells`` that does not report a hidden-test cell left as released."""

    def preprocess_cell(self, cell: Any, resources: Any, cell_index: int) -> Any:
        self._as_released = self._is_released_version(cell)
        return super().preprocess_cell(cell, resources, cell_index)

    def report_change(self, name: str, attr: str, old: Any, new: Any) -> None:
        if attr == "checksum" and self._as_released:
            self.log.debug("Hidden tests restored in cell %s (left as released)", name)
            return
        super().report_change(name, attr, old, new)

    def _is_released_version(self, cell: Any) -> bool:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is None:
            return False
        try:
            stored = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
        except MissingEntry:
            return False
        released = copy.deepcopy(cell)
        released.source = stored.source
        if not ClearHiddenTests(parent=self)._remove_hidden_test_region(released):
            return False  # no hidden tests: any change is the student's, and is reported
        return bool(released.source == cell.source)


__all__ = ["RestoreHiddenTests"]
