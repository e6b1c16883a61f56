"""groupcheck's real implementation of Kafka's classic consumer-group protocol (client + broker side)."""
