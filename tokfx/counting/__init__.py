"""Counting, what training starts from: pre-tokens (and lines, for SaGe's line context) over
texts in memory (`texts`), over a large text file in parallel processes (`text_file`) and over
corpus files of any format (`corpus_files`). The counts go into a native CountTable
(tokfx._count_table); the public functions here return dicts."""
from tokfx.counting.text_file import count_lines_file, count_pretokens_file
from tokfx.counting.texts import count_lines, count_pretokens

__all__ = ["count_lines", "count_lines_file", "count_pretokens", "count_pretokens_file"]
