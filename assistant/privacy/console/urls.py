from django.urls import path

from assistant.privacy.console import views

urlpatterns = [
    path("projects/<int:pk>/privacy/", views.project_privacy, name="console-project-privacy"),
]
