"""A Maven build that stopped because an artifact it needs (a plugin, a dependency) is not
in the repository it runs offline against (pure, text in, values out).

Checks have no network, so Maven runs offline (`assay.tools.java`): a plugin version the
pom pins that Debian's `/usr/share/maven-repo` does not carry stops the build before a
line of the code is compiled. That says nothing of the code; it is the machine's lack.
"""

from __future__ import annotations

import re

# `... Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and
# the artifact org.apache.felix:maven-bundle-plugin:jar:5.1.1 has not been downloaded from
# it before.`, for a plugin, an extension and a dependency alike.
_NOT_IN_OFFLINE_REPOSITORY = re.compile(
    r"in offline mode and the artifact (\S+) has not been downloaded from it before"
)


def missing_offline_artifact(output: str) -> str | None:
    """The first artifact the build said it could not have offline, or None."""
    match = _NOT_IN_OFFLINE_REPOSITORY.search(output)
    if match is None:
        return None
    return match[1]
