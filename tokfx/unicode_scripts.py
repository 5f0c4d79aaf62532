"""The Unicode script of a character, grouped as sentencepiece's trainer groups scripts when it
keeps a piece to one of them (IsValidSentencePiece, split_by_unicode_script): Hiragana,
Katakana and U+30FC count as Han, an Inherited character takes the script before it, and
U+2581 (its space) belongs to none."""
from __future__ import annotations

import functools

import regex

# The values of the Unicode Script property, as the regex module names them (Common first:
# most characters outside letters are Common). A name this regex version does not know is
# left out: its characters fall to UNKNOWN.
SCRIPTS = (
    "Common Latin Han Hiragana Katakana Inherited Greek Cyrillic Armenian Hebrew Arabic Syriac"
    " Thaana Nko Samaritan Mandaic Devanagari Bengali Gurmukhi Gujarati Oriya Tamil Telugu Kannada"
    " Malayalam Sinhala Thai Lao Tibetan Myanmar Georgian Hangul Ethiopic Cherokee"
    " Canadian_Aboriginal Ogham Runic Tagalog Hanunoo Buhid Tagbanwa Khmer Mongolian Limbu Tai_Le"
    " New_Tai_Lue Buginese Tai_Tham Balinese Sundanese Batak Lepcha Ol_Chiki Braille Glagolitic"
    " Tifinagh Bopomofo Coptic Yi Lisu Vai Bamum Syloti_Nagri Phags_Pa Saurashtra Kayah_Li Rejang"
    " Javanese Cham Tai_Viet Meetei_Mayek Linear_B Lycian Carian Old_Italic Gothic Old_Permic"
    " Ugaritic Old_Persian Deseret Shavian Osmanya Osage Elbasan Caucasian_Albanian Vithkuqi"
    " Linear_A Cypriot Imperial_Aramaic Palmyrene Nabataean Hatran Phoenician Lydian"
    " Meroitic_Hieroglyphs Meroitic_Cursive Kharoshthi Old_South_Arabian Old_North_Arabian"
    " Manichaean Avestan Inscriptional_Parthian Inscriptional_Pahlavi Psalter_Pahlavi Old_Turkic"
    " Old_Hungarian Hanifi_Rohingya Yezidi Old_Sogdian Sogdian Old_Uyghur Chorasmian Elymaic Brahmi"
    " Kaithi Sora_Sompeng Chakma Mahajani Sharada Khojki Multani Khudawadi Grantha Newa Tirhuta"
    " Siddham Modi Takri Ahom Dogra Warang_Citi Dives_Akuru Nandinagari Zanabazar_Square Soyombo"
    " Pau_Cin_Hau Bhaiksuki Marchen Masaram_Gondi Gunjala_Gondi Makasar Kawi Cuneiform Cypro_Minoan"
    " Egyptian_Hieroglyphs Anatolian_Hieroglyphs Mro Tangsa Bassa_Vah Pahawh_Hmong Medefaidrin Miao"
    " Tangut Nushu Khitan_Small_Script Duployan SignWriting Nyiakeng_Puachue_Hmong Toto Wancho"
    " Nag_Mundari Mende_Kikakui Adlam"
).split()
SPACE = "\u2581"
HAN = SCRIPTS.index("Han")
INHERITED = SCRIPTS.index("Inherited")
UNKNOWN = len(SCRIPTS)  # a character of no script this regex version names


@functools.cache
def _classifier() -> regex.Pattern:
    """One pattern, a group per script it knows: the matched group is the character's script."""
    groups = {index: rf"(?P<s{index}>\p{{Script={name}}})" for index, name in enumerate(SCRIPTS)}
    try:
        return regex.compile("|".join(groups.values()))
    except regex.error:  # an older regex: leave out the names it does not know
        known = [group for group in groups.values() if _compiles(group)]
        return regex.compile("|".join(known))


def _compiles(pattern: str) -> bool:
    try:
        regex.compile(pattern)
    except regex.error:
        return False
    return True


def script(char: str) -> int | None:
    """The index in SCRIPTS of char's script, Hiragana, Katakana and U+30FC as HAN (UNKNOWN for
    none it knows); None for U+2581."""
    if char == SPACE:
        return None
    found = _classifier().match(char)
    if found is None:
        return UNKNOWN
    index = int(found.lastgroup[1:])
    return HAN if char == "\u30fc" or SCRIPTS[index] in ("Hiragana", "Katakana") else index
