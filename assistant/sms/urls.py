from __future__ import annotations

from django.urls import path

from assistant.sms import views

urlpatterns = [
    path("twilio/incoming", views.incoming, name="sms-twilio-incoming"),
]
