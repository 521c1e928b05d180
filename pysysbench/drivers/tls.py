"""TLS client contexts for the MySQL and PostgreSQL drivers.

A driver builds one :class:`TLS` from its options when it is created and hands its
context to every connection it opens (prepare, run, check, cleanup, the lean wire,
which takes over the library's TLS transport); worker processes build the same one
from the same options.  The drivers decide *which* files to use and *whether* to
verify (docs/security.md: sysbench / libmariadb for MySQL, libpq for PostgreSQL);
this module loads them, says in one line which option or file cannot be used, and
explains a failed handshake.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Callable

from ..core.errors import ConfigError
from ..core.options import Values
from ..core.record import record

# OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH / X509_V_ERR_IP_ADDRESS_MISMATCH
HOST_MISMATCH_CODES = (62, 64)


@record(frozen=True)
class CertFile:
    """A certificate or key file and what named it (an option, or where it was found)."""

    path: str
    source: str

    def __str__(self) -> str:
        return f"{self.source} ('{self.path}')"


def given(option: str, path: str) -> CertFile | None:
    """The file of ``--option=path``, None when the option is empty."""
    return CertFile(path, option) if path else None


def given_files(values: Values, driver: str) -> tuple[CertFile | None, CertFile | None, CertFile | None]:
    """(CA, certificate, key) from ``--DRIVER-ssl-ca/-cert/-key``."""
    return tuple(
        given(f"--{driver}-ssl-{part}", getattr(values, f"{driver}_ssl_{part}")) for part in ("ca", "cert", "key")
    )  # type: ignore[return-value]


def found(path: str | os.PathLike[str], source: str) -> CertFile | None:
    """``path`` when it exists (a default place the client libraries look in), else None."""
    return CertFile(os.path.abspath(path), source) if os.path.exists(path) else None


def cert_and_key(
    cert: CertFile | None,
    key: CertFile | None,
    find_cert: Callable[[], CertFile | None],
    find_key: Callable[[], CertFile | None],
    key_name: str,
    options: str,
) -> tuple[CertFile | None, CertFile | None]:
    """The client certificate and key: each as given, else where the client library looks
    (``find_cert`` / ``find_key``; the key only beside a certificate).  A certificate found
    there without its key, which the library would fail on, is one line naming the missing
    file (``key_name``), not OpenSSL's 'PEM lib' about the certificate."""
    if cert is not None:
        return cert, key if key is not None else find_key()
    cert = find_cert()
    if cert is not None and key is None:
        key = find_key()
        if key is None:
            raise ConfigError(f"{key_name} not found, but {cert} is there: add the key beside it, or give {options}")
    return cert, key


def refuse_unused(files: tuple[CertFile | None, ...], needs: str) -> None:
    """A file given to a mode that would not use it gives a connection the user did not
    ask for (unencrypted, or unverified): one line saying which mode it needs."""
    for f in files:
        if f is not None:
            raise ConfigError(f"{f.source} needs {needs}")


def libpq_file(env: str, name: str) -> CertFile | None:
    """A file libpq uses without being told: ``$env`` when set, else ``~/.postgresql/name``
    when it exists."""
    if os.environ.get(env):
        return CertFile(os.environ[env], f"${env}")
    home = os.path.expanduser("~")  # not pathlib: a plain run would import it for this line alone
    if home == "~":  # no $HOME and no password entry: libpq looks nowhere either
        return None
    return found(os.path.join(home, ".postgresql", name), f"~/.postgresql/{name} (libpq's default)")


@record(frozen=True)
class Wording:
    """How a driver's options are named in the one-line hints."""

    ca_option: str  # "--mysql-ssl-ca"
    mode_option: str  # "--mysql-ssl"
    chain_only: str  # the mode that verifies the chain but not the host name
    unverified: str  # how to encrypt without verifying


@record(frozen=True)
class TLS:
    """The context every connection of a driver uses, and what it was built from."""

    context: ssl.SSLContext
    ca: CertFile | None
    verify: bool
    wording: Wording

    def failure_hint(self, err: ssl.SSLError) -> str:
        """What to do about a handshake that failed with ``err``."""
        w = self.wording
        if getattr(err, "verify_code", 0) in HOST_MISMATCH_CODES:
            return (
                "the server's certificate does not name the host connected to: connect by a name or "
                f"address it lists, or verify the chain only with {w.chain_only}"
            )
        if isinstance(err, ssl.SSLCertVerificationError):
            against = f"the CA in {self.ca}" if self.ca else "the system's trusted CAs"
            return (
                f"the server's certificate does not verify against {against}: pass the CA that signed it "
                f"with {w.ca_option}, or {w.unverified}"
            )
        return f"the TLS handshake failed: is TLS enabled on the server? check {w.mode_option} and the certificates"


def build(
    wording: Wording,
    *,
    verify: bool,
    check_hostname: bool,
    ca: CertFile | None = None,
    cert: CertFile | None = None,
    key: CertFile | None = None,
    crl: CertFile | None = None,
    ciphers: tuple[str, str] | None = None,
) -> TLS:
    """The client context: the chain checked against ``ca`` (the system's trusted CAs
    when None) only when ``verify``, the host name only when ``check_hostname`` too,
    ``cert``/``key`` presented to the server, ``ciphers`` = (option, cipher list).
    A file that cannot be used raises ConfigError naming it."""
    if key is not None and cert is None:
        raise ConfigError(f"{key} is a client key without a client certificate: give the certificate too")
    for f in (ca, cert, key, crl):
        if f is not None:
            _readable(f)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # TLS 1.2+, the library's safe defaults
    ctx.check_hostname = verify and check_hostname
    if not verify:
        ctx.verify_mode = ssl.CERT_NONE
    elif ca is not None:
        _load(ca, "holds no CA certificate", lambda: ctx.load_verify_locations(cafile=ca.path))
    else:
        ctx.load_default_certs()
    if verify and crl is not None:
        _load(crl, "holds no certificate revocation list", lambda: ctx.load_verify_locations(cafile=crl.path))
        ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_CHAIN
    if cert is not None:
        _refuse_encrypted(key or cert)
        # an empty password instead of OpenSSL's terminal prompt, should a key get this far
        what = (
            f"and {key} are not a certificate and its private key"
            if key
            else "holds no certificate with its private key"
        )
        _load(cert, what, lambda: ctx.load_cert_chain(cert.path, key.path if key else None, password=""))
    if ciphers is not None:
        option, names = ciphers
        try:
            ctx.set_ciphers(names)
        except ssl.SSLError:
            raise ConfigError(f"{option}: no cipher matches '{names}'") from None
    return TLS(ctx, ca if verify else None, verify, wording)


def _readable(f: CertFile) -> None:
    try:
        with open(f.path, "rb"):
            pass
    except OSError as exc:
        raise ConfigError(f"{f.source}: cannot read '{f.path}': {exc.strerror or exc}") from None


def _refuse_encrypted(f: CertFile) -> None:
    """A passphrase-protected PEM key (no option takes a passphrase, and a worker
    process has no terminal to ask on)."""
    with open(f.path, "rb") as fh:
        encrypted = b"ENCRYPTED" in fh.read(1 << 20)
    if encrypted:
        raise ConfigError(
            f"{f} is an encrypted private key and pysysbench takes no passphrase: decrypt it "
            f"(openssl pkey -in {f.path} -out plain.key) and give that file"
        )


def _load(f: CertFile, what: str, load: Callable[[], object]) -> None:
    try:
        load()
    except (ssl.SSLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or str(exc)
        raise ConfigError(f"{f} {what} ({reason})") from None


def handshake_error(exc: BaseException) -> ssl.SSLError | None:
    """The TLS error behind a failed connection attempt (asyncmy wraps it in its own
    error, asyncpg raises it as it is), or None."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, ssl.SSLError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def reason(err: ssl.SSLError) -> str:
    """OpenSSL's words for ``err``: 'self-signed certificate in certificate chain', ..."""
    if isinstance(err, ssl.SSLCertVerificationError) and err.verify_message:
        return str(err.verify_message).rstrip(".")
    return str(err.reason or err.strerror or err)
