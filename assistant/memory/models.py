"""A fact one user told the assistant about themselves, in one project. Its vector lives in
the memory collection of the vector store (see assistant.wiring.runtime.memory_store), under
`vector_id`, with the project and user in its metadata."""

from __future__ import annotations

import uuid

from django.db import models


def new_vector_id() -> str:
    return f"fact-{uuid.uuid4().hex}"


class UserFact(models.Model):
    project = models.ForeignKey(
        "assistant.Project", on_delete=models.CASCADE, related_name="user_facts"
    )
    #: "visitor:<id>" (anonymous widget visitor), "user:<id>" (a host page's signed-in user),
    #: "sms:<E.164 number>".
    user_key = models.CharField(max_length=120)
    text = models.CharField(max_length=300)
    vector_id = models.CharField(max_length=64, unique=True, default=new_vector_id)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["project", "user_key"])]

    def __str__(self) -> str:
        return f"{self.user_key}: {self.text[:60]}"
