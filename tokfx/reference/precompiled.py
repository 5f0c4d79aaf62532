"""Twin of tokfx._precompiled: `tokenizers`' Precompiled rule (tokfx.normalizers.precompiled)
over extended grapheme clusters matched by UAX #29's own regex for them (Table 1c, with
`regex`'s properties), the charsmap's rules as a dict.

Not `regex`'s \\X: it joins an Indic linker and the consonant after it even with no consonant
before the linker (" \\u094d\\u0915" is one \\X), where UAX #29's GB9c and unicode-segmentation,
which `tokenizers` cuts with, need one (" \\u094d" then "\\u0915")."""
from __future__ import annotations

import regex

_CLUSTER = regex.compile(r"""
    \r\n | [\p{GCB=Control}\p{GCB=CR}\p{GCB=LF}]
  | \p{GCB=Prepend}*
    (?: \p{GCB=L}* (?: \p{GCB=V}+ | \p{GCB=LV}\p{GCB=V}* | \p{GCB=LVT}) \p{GCB=T}* | \p{GCB=L}+ | \p{GCB=T}+
      | \p{GCB=Regional_Indicator}{2}
      | \p{Extended_Pictographic} (?: \p{GCB=Extend}* \p{GCB=ZWJ} \p{Extended_Pictographic})*
      | \p{InCB=Consonant} (?: [\p{InCB=Extend}\p{InCB=Linker}]* \p{InCB=Linker}
                               [\p{InCB=Extend}\p{InCB=Linker}]* \p{InCB=Consonant})+
      | [^\p{GCB=Control}\p{GCB=CR}\p{GCB=LF}])
    [\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=SpacingMark}]*
""", regex.VERBOSE)


def _shortest_rule(text: str, rules: dict[str, str], longest: int) -> str | None:
    """The replacement of the shortest key that text starts with: the spm_precompiled crate's
    search stops at a NUL (the end of a C string for darts-clone)."""
    for size in range(1, min(len(text), longest) + 1):
        if text[size - 1] == "\0":
            return None
        found = rules.get(text[:size])
        if found is not None:
            return found
    return None


def precompiled(text: str, rules: dict[str, str]) -> str:
    longest = max(map(len, rules), default=0)

    def cluster(match: regex.Match) -> str:
        text = match.group()
        if len(text.encode("utf-8")) < 6:
            found = _shortest_rule(text, rules, longest)
            if found is not None:
                return found
        return "".join(_shortest_rule(c, rules, longest) or c for c in text)

    return _CLUSTER.sub(cluster, text)
