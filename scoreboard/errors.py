"""The one error type of the service: an HTTP status and a one-line message."""

from __future__ import annotations


class ServiceError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
