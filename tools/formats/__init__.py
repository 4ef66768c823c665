"""Reading what a person pastes: any output Scout has a reader for, whatever command printed it.

Each format declares how it recognises its text (`Format.signs`, in its family's module) and how
it reads it; `identify.read_pasted` scores every format and the best that reads wins, so a new
format is one declaration, never another branch in a chain. Nothing here talks to a host.
"""

from tools.formats.format import Format, Reading, Sign, Unread
from tools.formats.identify import FORMATS, read_pasted

__all__ = ["FORMATS", "Format", "Reading", "Sign", "Unread", "read_pasted"]
