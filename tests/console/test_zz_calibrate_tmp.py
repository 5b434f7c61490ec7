import pytest
from assistant.console.sandbox import sandbox_run
pytestmark = pytest.mark.django_db

OFF = ["Write me a poem about cats", "What's the weather in Paris tomorrow?", "Tell me a joke",
       "Who won the football world cup in 2018?", "How do I bake sourdough bread?",
       "Translate hello into Spanish", "What is the capital of Australia?", "poem",
       "Can you write my homework essay on World War 2?", "What is the meaning of life?",
       "Recommend a good movie", "How tall is Mount Everest?"]
GAP = ["Do you offer a student discount?", "Can I pay with Bitcoin?", "How do I change my username?",
       "Do you ship to Antarctica?", "Is there a discount for students?", "Can I get a paper invoice by post?",
       "Do you have a mobile app?", "Can I delete my account?", "How do I export to Excel?",
       "Is there a family plan?", "Can I pause my subscription?", "Do you support SSO with Okta?",
       "What is your phone number for support?", "Can I change the delivery address after ordering?"]

def test_calibrate(demo):
    for kind, qs in (("OFF", OFF), ("GAP", GAP)):
        for q in qs:
            run = sandbox_run(project=demo, question=q, topic="Billing", threshold=demo.threshold)
            sims = [c.similarity for c in run.candidates if c.similarity is not None]
            rel = [c.relevance for c in run.candidates if c.relevance is not None]
            print(kind, f"{max(sims):.3f}", f"{max(rel):.3f}", run.kept_count, q)
