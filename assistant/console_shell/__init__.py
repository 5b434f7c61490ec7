"""The console shell every app's console pages stand in: who may sign in (login lockout) and
use the console (staff access), and what every page shows around its content (the chosen
project). Below the apps, so ingestion's and feedback's pages import it as the console does."""
