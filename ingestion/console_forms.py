from __future__ import annotations

from django import forms

from ingestion.models import Source


class WebsiteSourceForm(forms.Form):
    name = forms.CharField(max_length=200)
    start_url = forms.URLField(
        label="Start URL", assume_scheme="https",
        help_text="Pages on this host and folder are read, obeying robots.txt.",
    )  # fmt: skip
    schedule = forms.ChoiceField(choices=Source.Schedule.choices, initial=Source.Schedule.DAILY)
    max_pages = forms.IntegerField(
        label="At most pages", min_value=1, max_value=10_000, initial=500
    )

    def __init__(self, *args: object, project: object = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.project = project

    def clean_start_url(self) -> str:
        url = self.cleaned_data["start_url"]
        if not url.lower().startswith(("http://", "https://")):
            raise forms.ValidationError("Enter an http or https URL.")
        return url

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if Source.objects.filter(project=self.project, name=name).exists():
            raise forms.ValidationError("This project already has a source with that name.")
        return name
