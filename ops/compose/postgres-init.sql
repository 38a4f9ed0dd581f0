-- The registry keeps its schemas in the same PostgreSQL, in a database of its own.
CREATE DATABASE apicurio;
